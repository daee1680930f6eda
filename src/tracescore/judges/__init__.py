"""LLM-judge scorers: client, prompts, safety, cache, budgets and the off-path runner.

Judges are async and talk to a model over HTTP, so they never run on the ingestion path:
`runner.JudgeRunner` queues judge work, bounds it (queue, budgets, concurrency) and reports
scores later. This package's `__init__` imports nothing on purpose: the scorer registry imports
the judge scorers, and the runner imports the config package, which imports the registry.

Modules:
    endpoint    `JudgeEndpoint`, the connection block (top level and per scorer)
    templates/  versioned prompt templates (`<name>.v<N>.txt`), loaded by `prompts`
    prompts     template loading and the prompt a judge call sends
    sanitize    redaction, truncation and the per-call nonce fence
    render      a trajectory as text for a judge (sub-agents, errored and paused calls)
    base        `JudgeScorerBase`: `async ascore(trajectory, judge) -> Score`
    tool_call_accuracy, trajectory, rubric, relevancy   the judge scorers
    client      `JudgeClient`: OpenAI-compatible chat completions, retries, structured output
    cache, budget, telemetry   shared by every client of a runner
    runner      `JudgeRunner`: bounded queue, sampling, callbacks
    progress    a terminal progress bar for `tracescore score`
"""
