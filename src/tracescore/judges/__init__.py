"""LLM-judge scorers: client, prompts, safety, cache, budgets and the off-path runner.

Judges are async and talk to a model over HTTP, so they never run on the ingestion path:
`runner.JudgeRunner` queues judge work, bounds it (queue, budgets, concurrency) and reports
scores later. This package's `__init__` imports nothing on purpose: the scorer registry imports
the judge scorers, and the runner imports the config package, which imports the registry.
docs/judges.md is the user and integrator guide.

Modules:
    settings    the `judge:` section (`JudgeSettings`, `JudgeFields`), read by the judges
    endpoint    `JudgeEndpoint`, the connection block (top level and per scorer)
    templates/  versioned prompt templates (`<name>.v<N>.txt`), loaded by `prompts`
    prompts     template loading and the messages of one judge call
    answer_schema   answer schemas keyed by call
    redact      redaction of secrets before anything leaves the process
    sanitize    truncation and the per-call nonce fence
    render      a trajectory as text for a judge (sub-agents, errored and paused calls)
    base        `JudgeScorerBase`: `async ascore(trajectory, judge) -> Score`
    tool_call_accuracy, trajectory, rubric, relevancy   the judge scorers
    client      `JudgeClient`: one question to a judge, cached, in flight once, repaired once
    completions `Completions`: chat-completions calls, structured output, budgets, retries
    replies     JSON extraction and validation of replies
    errors      `JudgeError` (failed) and `JudgeSkipped` (budget, queue_full, shutdown)
    shared      `JudgeShared`: what every client of a runner shares, from the `judge:` section
    cache, budget, inflight, telemetry   held in `JudgeShared`
    jobs        `JudgeJob`, `JudgeResult`, `judge_sampled`
    runner      `JudgeRunner`: bounded queue, workers, callbacks
    progress    `tracescore score`'s terminal progress bar

The service's judge waiting is `pipeline/live_judges.py` and `pipeline/judge_wait.py`;
`tracescore score`'s judge batch is `cli/_judges.py`.
"""
