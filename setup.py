"""Build the optional native OTLP wire codec; everything else is in pyproject.toml.

`optional=True`: without a C compiler the install still succeeds and tracescore reads and
checks the wire format in pure Python (`tracescore.otlp.native` says which path runs and why;
`TRACESCORE_NATIVE=0` chooses the pure-Python path where the extension was built).
Compiled with warnings as errors: a warning in this code is a bug until shown otherwise.
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
                    "_span",
                    "_attributes",
                    "_records",
                    "_grouping",
                    "_cut",
                    "_span_keys",
                    "_validate",
                )
            ],
            depends=["src/tracescore/otlp/_scan.h"],
            optional=True,
            # Hidden: only PyInit__scan is exported, so no name here can shadow a libc one.
            extra_compile_args=[
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-Wno-unused-parameter",
                "-fvisibility=hidden",
            ],
        )
    ]
)
