// Runs the Vercel AI SDK (`ai`) offline against its own MockLanguageModelV3 and writes each
// case's spans, captured with the OpenTelemetry JS SDK, as OTLP JSON (hex ids) via the SDK's
// own JSON serializer: `<out>/vercel-<case>.otlp.json`, one path per line on stdout.
//
// Usage: node generate.mjs <out dir>
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3, mockId } from 'ai/test';
import { z } from 'zod';

// Ids derived from the case name (hash + counter), as tests/frameworks/_capture.py does, so a
// regenerated trace differs from the committed one only where the SDK records something new.
class CaseIds {
  reset(name) {
    const digest = createHash('sha256').update(name).digest('hex');
    this.trace = digest.slice(0, 28);
    this.span = digest.slice(32, 44);
    this.traces = 0;
    this.spans = 0;
  }
  generateTraceId() {
    this.traces += 1;
    return this.trace + this.traces.toString(16).padStart(4, '0');
  }
  generateSpanId() {
    this.spans += 1;
    return this.span + this.spans.toString(16).padStart(4, '0');
  }
}

// Without a context manager every span would be a root: the SDK nests spans through the
// active context (startActiveSpan), which needs AsyncLocalStorage across awaits.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const ids = new CaseIds();
const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'tracescore-test-vercel' }),
  idGenerator: ids,
  spanProcessors: [new SimpleSpanProcessor(memory)],
});
const tracer = provider.getTracer('tracescore-tests');

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const TIMESTAMP = new Date(0);

function toolCalls(...calls) {
  return {
    content: calls.map(([id, name, args]) => ({
      type: 'tool-call',
      toolCallId: id,
      toolName: name,
      input: JSON.stringify(args),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: USAGE,
    warnings: [],
    response: { id: 'resp-tools', modelId: 'mock-model', timestamp: TIMESTAMP },
  };
}

function answer(text) {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: USAGE,
    warnings: [],
    response: { id: 'resp-text', modelId: 'mock-model', timestamp: TIMESTAMP },
  };
}

/** A mock model that answers each request with the next scripted response. */
function scripted(...responses) {
  let next = 0;
  return new MockLanguageModelV3({
    provider: 'mock-provider',
    modelId: 'mock-model',
    doGenerate: async () => {
      if (next >= responses.length) throw new Error('the script has no more responses');
      return responses[next++];
    },
  });
}

const tools = {
  get_weather: tool({
    description: 'Current weather in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  }),
  lookup_order: tool({
    description: 'Status of an order.',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, status: 'shipped' }),
  }),
  charge_card: tool({
    description: 'Charge the card on file.',
    inputSchema: z.object({ amount_cents: z.number() }),
    execute: async ({ amount_cents }) => {
      if (amount_cents <= 0) throw new Error('amount_cents must be positive');
      return { charged: amount_cents };
    },
  }),
  close_account: tool({
    description: 'Close a user account.',
    inputSchema: z.object({ user_id: z.number() }),
    needsApproval: true,
    execute: async ({ user_id }) => ({ closed: user_id }),
  }),
};

function telemetry() {
  return { isEnabled: true, functionId: 'shop_agent', tracer };
}

async function run(model, input) {
  return generateText({
    model,
    tools,
    stopWhen: stepCountIs(5),
    experimental_telemetry: telemetry(),
    // Approval ids are random by default; the SDK's own test id generator keeps them stable.
    _internal: { generateId: mockId({ prefix: 'approval' }) },
    ...input,
  });
}

const CASES = {
  clean: async () => {
    await run(
      scripted(
        toolCalls(['call_w1', 'get_weather', { city: 'Paris' }], ['call_o1', 'lookup_order', { order_id: 'A-42' }]),
        answer('It is sunny in Paris and order A-42 has shipped.'),
      ),
      { prompt: 'What is the weather in Paris, and where is order A-42?' },
    );
  },
  tool_error: async () => {
    await run(
      scripted(
        toolCalls(['call_e1', 'get_weather', { city: 'Paris' }], ['call_e2', 'charge_card', { amount_cents: 0 }]),
        answer('It is sunny in Paris, but the card could not be charged.'),
      ),
      { prompt: 'Check the weather in Paris and charge my card 0 cents.' },
    );
  },
  // needsApproval: the first run stops with an approval request (close_account never runs);
  // a second generateText call (a trace of its own) carries the user's denial.
  denied: async () => {
    const prompt = 'Check the weather in Paris, then close account 7.';
    const first = await run(
      scripted(toolCalls(['call_d1', 'get_weather', { city: 'Paris' }], ['call_d2', 'close_account', { user_id: 7 }])),
      { prompt },
    );
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    if (request == null) throw new Error('denied: the first run asked for no approval');
    await run(scripted(answer('I did not close account 7: you declined.')), {
      messages: [
        { role: 'user', content: prompt },
        ...first.response.messages,
        {
          role: 'tool',
          content: [
            {
              type: 'tool-approval-response',
              approvalId: request.approvalId,
              approved: false,
              reason: 'the user declined',
            },
          ],
        },
      ],
    });
  },
};

const out = process.argv[2];
if (!out) {
  console.error('usage: node generate.mjs <out dir>');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
for (const [name, body] of Object.entries(CASES)) {
  await provider.forceFlush();
  memory.reset();
  ids.reset(`vercel-${name}`);
  await body();
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  if (spans.length === 0) throw new Error(`vercel-${name}: no spans were captured`);
  const doc = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
  const path = join(out, `vercel-${name}.otlp.json`);
  writeFileSync(path, JSON.stringify(doc, null, 1) + '\n');
  console.log(path);
}
await provider.shutdown();
