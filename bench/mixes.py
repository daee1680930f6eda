"""The scorer mixes the benchmarks score runs with: one scenario's lines below its `match`.

- `CHECKS`: a `max_tool_calls` gate, `no_tool_errors` and `called_tool` (tool names and
  statuses only);
- `CAPACITY_MATCHING`: argument and trajectory matching (`tool_calls` with a subset of
  arguments, `trajectory_accuracy` with relaxed ordering, `tool_call_accuracy` with a tool
  order), which reads tool arguments.
"""

CHECKS = """
    gates: [{type: max_tool_calls, max: 20}]
    scorers:
      - {type: no_tool_errors, threshold: 1.0}
      - {type: called_tool, tool: search_docs}
"""
CAPACITY_MATCHING = """
    scorers:
      - type: tool_calls
        expected_tools: [search_docs, read_file]
        arguments: {search_docs: {query: "alpha bravo"}}
      - type: trajectory_accuracy
        steps: [{tool: search_docs}, {tool: read_file}, {tool: run_sql}]
        ordering: relaxed
      - type: tool_call_accuracy
        expected_tool_order: [search_docs, read_file]
"""
