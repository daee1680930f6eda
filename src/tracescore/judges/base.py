"""`JudgeScorerBase`: a scorer whose verdict comes from an LLM judge.

A judge scorer is a frozen pydantic model like every scorer, but it scores with
`async ascore(trajectory, judge)`, where `judge` is a `JudgeClient` passed in (never built
here). Its sync `score()` returns an error score: a judge cannot run on the ingestion path.
`ascore` never raises: a skipped or failed judge yields a score whose `error` says why.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from tracescore import semconv
from tracescore.judges.endpoint import JudgeEndpoint
from tracescore.judges.errors import JudgeError, JudgeSkipped
from tracescore.judges.prompts import PromptTemplate, load_template
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import DIGEST_VERSION, Outcome, ScorerBase

if TYPE_CHECKING:
    from tracescore.judges.client import JudgeClient

__all__ = ["JUDGE_REQUIRED", "JudgeScorerBase", "mastra_round2", "skipped_score"]

JUDGE_REQUIRED = "judge_required"


class JudgeScorerBase(ScorerBase):
    """Base of the LLM-judge scorers; subclasses set `template_name` and implement `ajudge`."""

    deterministic: ClassVar[bool] = False
    template_name: ClassVar[str]
    template_version: ClassVar[int] = 1

    judge: JudgeEndpoint | None = None
    """Connection keys overriding the top-level `judge:` section for this scorer only."""

    @classmethod
    def template(cls) -> PromptTemplate:
        """The packaged prompt template this scorer sends."""
        return load_template(cls.template_name, cls.template_version)

    def digest(self, model: str | None = None, temperature: float | None = None) -> str:
        """`scorer-v1:<sha256>` of the parameters, judge model, temperature and template.

        Connection details (URL, key variable, timeouts, headers) are left out: they change
        where the judge runs, not what it is asked or who answers.
        """
        if model is None and self.judge is not None:
            model = self.judge.model
        if temperature is None and self.judge is not None:
            temperature = self.judge.temperature
        template = self.template()
        payload: dict[str, Any] = self.model_dump(
            mode="json", exclude={"name", "threshold", "judge"}
        )
        payload["judge"] = {
            "model": model,
            "temperature": temperature,
            "template": template.id,
            "template_sha256": template.sha256,
        }
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return f"{DIGEST_VERSION}:{hashlib.sha256(canonical.encode()).hexdigest()}"

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """Not available: a judge scorer needs a judge client (see `ascore`)."""
        raise JudgeError(JUDGE_REQUIRED, self._required_message())

    def score(self, trajectory: Trajectory) -> Score:
        """An error score: judge scorers run through `ascore` with a judge client."""
        return self.error_score(f"{JUDGE_REQUIRED}: {self._required_message()}")

    async def ascore(self, trajectory: Trajectory, judge: JudgeClient) -> Score:
        """Score one run with `judge`; never raises (skips and failures become error scores)."""
        digest = self.digest(judge.model, judge.temperature)
        try:
            outcome = await self.ajudge(trajectory, judge)
        except JudgeSkipped as exc:
            return skipped_score(self, exc.reason, str(exc), digest)
        except JudgeError as exc:
            return self.error_score(f"{exc.error_type}: {exc}", digest)
        except Exception as exc:  # a scorer bug must not take the runner down
            return self.error_score(f"{type(exc).__name__}: {exc}", digest)
        return self.finish(outcome, digest)

    async def ajudge(self, trajectory: Trajectory, judge: JudgeClient) -> Outcome:
        """Ask the judge and turn its answer into an outcome. Subclasses implement this."""
        raise NotImplementedError

    def _required_message(self) -> str:
        return (
            f"scorer {self.score_name!r} is an LLM judge and needs a judge client; "
            "configure `judge:` and run it through tracescore score or serve"
        )


def mastra_round2(value: float) -> float:
    """Mastra's `Math.round((x + Number.EPSILON) * 100) / 100` (half up, unlike `round`)."""
    return math.floor((value + sys.float_info.epsilon) * 100 + 0.5) / 100


def skipped_score(scorer: ScorerBase, reason: str, message: str, digest: str) -> Score:
    """The score of a judge deliberately not run: `error` is `skipped: <reason>`."""
    return Score(
        name=scorer.score_name,
        type=scorer.type,
        value=None,
        passed=None,
        label=semconv.LABEL_SKIPPED,
        explanation=f"judge skipped ({reason}): {message}",
        digest=digest,
        error=f"skipped: {reason}",
    )
