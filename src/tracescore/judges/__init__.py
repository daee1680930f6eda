"""LLM-judge scorers: client, prompts, safety, cache, budgets and the off-path runner.

Judges are async and talk to a model over HTTP, so they never run on the ingestion path:
`runner.JudgeRunner` queues judge work, bounds it (queue, budgets, concurrency) and reports
scores later. This package's `__init__` imports nothing on purpose: the scorer registry imports
the judge scorers, and the runner imports the config package, which imports the registry.
docs/judges.md is the user and integrator guide.

Modules:
    endpoint    `JudgeEndpoint`, the connection block (top level and per scorer)
    templates/  versioned prompt templates (`<name>.v<N>.txt`), loaded by `prompts`
    prompts     template loading and the messages of one judge call
    redact      redaction of secrets before anything leaves the process
    sanitize    truncation and the per-call nonce fence
    render      a trajectory as text for a judge (sub-agents, errored and paused calls)
    base        `JudgeScorerBase`: `async ascore(trajectory, judge) -> Score`
    tool_call_accuracy, trajectory, rubric, relevancy   the judge scorers
    client      `JudgeClient`: OpenAI-compatible chat completions, retries, structured output
    replies     JSON extraction and validation of replies, Retry-After
    errors      `JudgeError` (failed) and `JudgeSkipped` (budget, queue_full, shutdown)
    cache, budget, telemetry   shared by every client of a runner
    runner      `JudgeRunner`: bounded queue, sampling, callbacks
    offline     `tracescore score` integration; progress: its terminal progress bar
    live        `tracescore serve` integration
    wait        `JudgeWait`: a span held for its judge scores (`judge_wait` > 0)
"""
