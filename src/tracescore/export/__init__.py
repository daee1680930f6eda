"""Re-emit scores: span attributes, `gen_ai.evaluation.result` log events, metrics, OTLP export.

Modules:
    attributes  score attributes for the scored agent span, and AnyValue encoding
    spans       annotate a forwarded agent span, or build the `evaluate {agent}` fanout span
    events      one `gen_ai.evaluation.result` LogRecord per score
    metrics     `Telemetry`: score/run/tool metrics and the service's own, Prometheus and OTLP
    otlp        `OtlpExporter`: bounded queue and background sender (gRPC or HTTP/protobuf)
"""
