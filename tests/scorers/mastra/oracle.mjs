// Scores hand-built agent runs with @mastra/evals 1.10.2 code scorers and checks (no model, no
// network) and prints what they give: the oracle of tests/scorers/test_oracles.py.
// tests/scorers/mastra_oracle.py installs package-lock.json with `npm ci` and runs this script;
// its output must equal tests/testdata/oracles/mastra_scores.jsonl.
// Prints one JSON line per run ({run, trajectory, output}) and per (run, scorer): {run, scorer,
// score, reason?, detail} or, where Mastra throws, {run, scorer, error}.
import {
  createToolCallAccuracyScorerCode,
  createTrajectoryAccuracyScorerCode,
  createTrajectoryScorerCode,
  checks,
} from '@mastra/evals/scorers/prebuilt';
import {
  createAgentTestRun,
  createTestMessage,
  createToolInvocation,
  createTrajectoryTestRun,
} from '@mastra/evals/scorers/utils';
import { extractTrajectory } from '@mastra/core/evals';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const versions = {
  evals: require('@mastra/evals/package.json').version,
  core: require('@mastra/core/package.json').version,
  node: process.version,
};
console.log(JSON.stringify({ versions }));

const ok = (id, toolName, args, result) =>
  ({ type: 'tool-invocation', toolInvocation: createToolInvocation({ toolCallId: id, toolName, args, result, state: 'result' }) });
const waiting = (id, toolName, args) =>
  ({ type: 'tool-invocation', toolInvocation: createToolInvocation({ toolCallId: id, toolName, args, state: 'call' }) });
const thrown = (id, toolName, args, errorText) =>
  ({ type: 'tool-invocation', toolInvocation: createToolInvocation({ toolCallId: id, toolName, args, state: 'output-error', errorText }) });

function agentRun(runId, userText, parts, finalText) {
  return createAgentTestRun({
    runId,
    inputMessages: [createTestMessage({ content: userText, role: 'user', id: `${runId}-u` })],
    output: [createTestMessage({ content: finalText, role: 'assistant', id: `${runId}-a`, parts: [...parts, { type: 'text', text: finalText }] })],
  });
}

// A run that stopped early: the assistant messages carry tool invocations and no text part.
function stoppedRun(runId, userText, parts) {
  return createAgentTestRun({
    runId,
    inputMessages: [createTestMessage({ content: userText, role: 'user', id: `${runId}-u` })],
    output: [createTestMessage({ content: '', role: 'assistant', id: `${runId}-a`, parts })],
  });
}

const RUNS = {
  good: agentRun('good', 'Weather in Paris and order A-42?', [
    ok('c1', 'get_weather', { city: 'Paris' }, { text: 'sunny' }),
    ok('c2', 'lookup_order', { order_id: 'A-42' }, { status: 'shipped' }),
  ], 'Sunny in Paris; A-42 shipped.'),
  tool_error: agentRun('tool_error', 'Weather in Paris, then charge 0', [
    ok('c1', 'get_weather', { city: 'Paris' }, { text: 'sunny' }),
    thrown('c2', 'charge_card', { amount_cents: -5 }, 'amount_cents must be positive'),
    ok('c3', 'lookup_order', { order_id: 'A-42' }, { status: 'shipped' }),
  ], 'Sunny; charge failed.'),
  bad: agentRun('bad', 'Delete user 7 if Oslo is cold', [
    ok('c1', 'get_weather', { city: 'Oslo' }, { text: 'cold' }),
    ok('c2', 'get_weather', { city: 'Oslo' }, { text: 'cold' }),
    ok('c3', 'delete_account', { user_id: 7 }, { deleted: true }),
  ], 'Deleted.'),
  // Stopped for an approval: lookup_order ran, refund_order waits (state 'call'); no answer.
  paused: stoppedRun('paused', 'Refund order A-42', [
    ok('c1', 'lookup_order', { order_id: 'A-42' }, { status: 'shipped' }),
    waiting('c2', 'refund_order', { order_id: 'A-42' }),
  ]),
  // Ended in an error: the last call threw and the run stopped there.
  error_end: stoppedRun('error_end', 'Weather in Paris, then charge 0', [
    ok('c1', 'get_weather', { city: 'Paris' }, { text: 'sunny' }),
    thrown('c2', 'charge_card', { amount_cents: -5 }, 'amount_cents must be positive'),
  ]),
  // Tool calls only: both ran, the model then wrote no text.
  tools_only: stoppedRun('tools_only', 'Weather in Paris and order A-42?', [
    ok('c1', 'get_weather', { city: 'Paris' }, { text: 'sunny' }),
    ok('c2', 'lookup_order', { order_id: 'A-42' }, { status: 'shipped' }),
  ]),
  // No assistant message at all (the run failed before the model answered): output is [].
  no_output: createAgentTestRun({
    runId: 'no_output',
    inputMessages: [createTestMessage({ content: 'Weather in Paris?', role: 'user', id: 'no_output-u' })],
    output: [],
  }),
  // No user message: the input is [].
  no_input: createAgentTestRun({
    runId: 'no_input',
    inputMessages: [],
    output: [createTestMessage({ content: 'Sunny.', role: 'assistant', id: 'no_input-a', parts: [ok('c1', 'get_weather', { city: 'Paris' }, { text: 'sunny' }), { type: 'text', text: 'Sunny.' }] })],
  }),
};

const expectedSteps = [
  { stepType: 'tool_call', name: 'get_weather', toolArgs: { city: 'Paris' } },
  { stepType: 'tool_call', name: 'lookup_order' },
];

const agentScorers = {
  'toolCallAccuracy(expectedTool=get_weather)': createToolCallAccuracyScorerCode({ expectedTool: 'get_weather' }),
  'toolCallAccuracy(get_weather,strict)': createToolCallAccuracyScorerCode({ expectedTool: 'get_weather', strictMode: true }),
  'toolCallAccuracy(order=[get_weather,lookup_order])': createToolCallAccuracyScorerCode({ expectedToolOrder: ['get_weather', 'lookup_order'] }),
  'checks.calledTool(lookup_order)': checks.calledTool('lookup_order'),
  'checks.didNotCall(delete_account)': checks.didNotCall('delete_account'),
  'checks.toolOrder([get_weather,lookup_order])': checks.toolOrder(['get_weather', 'lookup_order']),
  'checks.maxToolCalls(2)': checks.maxToolCalls(2),
  'checks.noToolErrors()': checks.noToolErrors(),
  'checks.usedNoTools()': checks.usedNoTools(),
  'checks.includes(sunny)': checks.includes('sunny'),
};

const trajScorers = {
  'trajectoryAccuracy(relaxed)': createTrajectoryAccuracyScorerCode({ expectedTrajectory: { steps: expectedSteps }, comparisonOptions: { ordering: 'relaxed' } }),
  'trajectoryAccuracy(strict)': createTrajectoryAccuracyScorerCode({ expectedTrajectory: { steps: expectedSteps }, comparisonOptions: { ordering: 'strict' } }),
  'trajectory(unified)': createTrajectoryScorerCode({
    defaults: { steps: expectedSteps, ordering: 'relaxed', maxSteps: 3, noRedundantCalls: true, blacklistedTools: ['delete_account'] },
  }),
};

const brief = (r) => {
  const p = r.preprocessStepResult ?? {};
  const keep = {};
  for (const k of ['actualTools', 'correctToolCalled', 'correctOrderCalled', 'actualStepNames', 'expectedStepNames', 'passed', 'count', 'errorCount', 'actualCount']) if (k in p) keep[k] = p[k];
  if (p.comparison) keep.comparison = { score: p.comparison.score, missingSteps: p.comparison.missingSteps, extraSteps: p.comparison.extraSteps, outOfOrderSteps: p.comparison.outOfOrderSteps };
  if (p.accuracy) keep.accuracy = p.accuracy.score;
  if (p.efficiency) keep.efficiency = p.efficiency.score;
  if (p.blacklist) keep.blacklist = { score: p.blacklist.score, violated: p.blacklist.violatedTools };
  if (p.toolFailures) keep.toolFailures = p.toolFailures.score;
  return keep;
};

async function scoreOne(runName, name, sc, run) {
  try {
    const r = await sc.run(run);
    console.log(JSON.stringify({ run: runName, scorer: name, score: r.score, reason: r.reason, detail: brief(r) }));
  } catch (e) {
    console.log(JSON.stringify({ run: runName, scorer: name, error: String(e.message ?? e) }));
  }
}

// The state of each invocation, so the tests rebuild the same run ('call' is a paused call).
const states = (run) => run.output.flatMap((m) => (m.content.parts ?? []).filter((p) => p.type === 'tool-invocation').map((p) => p.toolInvocation.state));

for (const [runName, run] of Object.entries(RUNS)) {
  const trajectory = extractTrajectory(run.output);
  const trun = createTrajectoryTestRun({ inputMessages: run.input.inputMessages, trajectory, runId: run.runId });
  console.log(JSON.stringify({ run: runName, trajectory: trajectory.steps.map((s) => [s.stepType, s.name, s.toolArgs, s.success]), states: states(run), messages: { input: run.input.inputMessages.length, output: run.output.length } }));
  for (const [name, sc] of Object.entries(agentScorers)) await scoreOne(runName, name, sc, run);
  for (const [name, sc] of Object.entries(trajScorers)) await scoreOne(runName, name, sc, trun);
}
