"""Build the optional native OTLP span scanner; everything else is in pyproject.toml.

`optional=True`: without a C compiler the install still succeeds and tracescore uses the
pure-Python scanner (tracescore.otlp.scan says which one runs).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tracescore.otlp._scan",
            [
                f"src/tracescore/otlp/{name}.c"
                for name in (
                    "_scan",
                    "_attributes",
                    "_records",
                    "_grouping",
                    "_cut",
                    "_genai",
                    "_genai_bind",
                    "_flat",
                    "_flat_order",
                    "_validate",
                    "_emit_logs",
                    "_emit_attributes",
                    "_checks",
                    "_select",
                    "_plan",
                )
            ],
            depends=[
                "src/tracescore/otlp/_scan.h",
                "src/tracescore/otlp/_genai.h",
                "src/tracescore/otlp/_emit.h",
            ],
            optional=True,
            # Hidden: only PyInit__scan is exported, so no name here can shadow a libc one.
            extra_compile_args=[
                "-O2",
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
                "-fvisibility=hidden",
            ],
        )
    ]
)
