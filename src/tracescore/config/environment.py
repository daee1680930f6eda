"""Environment variables a config names (secrets), checked where a command will need them.

`serve` refuses to start without them and `score` without a judge key, so `validate-config`
checks them too: "ok" from the validator must mean the config will run on this machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tracescore.config.model import Config
from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.endpoint import ResolvedEndpoint

__all__ = [
    "annotation_key_problems",
    "bearer_token_problems",
    "environment_problems",
    "judge_key_problems",
]


def environment_problems(config: Config, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every unset or empty variable the config names, each with its YAML path."""
    return (
        bearer_token_problems(config, environ)
        + judge_key_problems(config, environ)
        + annotation_key_problems(config, environ)
    )


def bearer_token_problems(config: Config, environ: Mapping[str, str] | None = None) -> list[str]:
    """Receivers whose `auth.bearer_token_env` names an unset or empty variable."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    for name in ("grpc", "http"):
        receiver = getattr(config.receivers, name)
        if receiver is None or receiver.auth is None:
            continue
        variable = receiver.auth.bearer_token_env
        if not env.get(variable, "").strip():
            problems.append(
                f"receivers.{name}.auth.bearer_token_env: environment variable {variable!r} "
                "is not set or empty"
            )
    return problems


def judge_key_problems(config: Config, environ: Mapping[str, str] | None = None) -> list[str]:
    """Judge API key variables (`judge.api_key_env`, or an entry's own) that are unset."""
    env = os.environ if environ is None else environ
    problems: set[str] = set()
    for i, scenario in enumerate(config.scenarios):
        for section in ("gates", "scorers"):
            for j, entry in enumerate(getattr(scenario, section)):
                if not isinstance(entry, JudgeScorerBase):
                    continue
                try:
                    endpoint = ResolvedEndpoint.merge(config.judge, entry.judge)
                except ValueError as exc:
                    problems.add(f"scenarios[{i}].{section}[{j}]: {exc}")
                    continue
                variable = endpoint.api_key_env
                if variable and not env.get(variable):
                    own = entry.judge is not None and entry.judge.api_key_env is not None
                    where = f"scenarios[{i}].{section}[{j}].judge" if own else "judge"
                    problems.add(
                        f"{where}.api_key_env: environment variable {variable!r} is not set "
                        "or is empty"
                    )
    return sorted(problems)


def annotation_key_problems(config: Config, environ: Mapping[str, str] | None = None) -> list[str]:
    """`annotations.phoenix.api_key_env` naming an unset or empty variable."""
    env = os.environ if environ is None else environ
    phoenix = config.annotations.phoenix
    if phoenix is None or phoenix.api_key_env is None:
        return []
    if env.get(phoenix.api_key_env, "").strip():
        return []
    return [
        f"annotations.phoenix.api_key_env: environment variable {phoenix.api_key_env!r} "
        "is not set or empty"
    ]
