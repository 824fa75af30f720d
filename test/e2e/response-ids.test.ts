import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAccount, processAdmin, startInferenceStack, TRANSLATED_FAMILY_B, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { rawCall, sseFrames } from '../helpers/reliability.js';

/**
 * The id every answer carries, exactly as its format writes it, on every path a request can take: the same
 * format as the upstream (passed through and rewritten), translated through the hub, the bridge (an Anthropic
 * upstream behind the chat and Responses formats), and native Responses; JSON and streams. Regression: the bridge's
 * chat answers said `chatcmpl-chatcmpl-<hex>` (the chat identity was applied by the pipeline and again by the
 * chat format's renderer and encoder).
 */
const HEX = '[0-9a-f]{32}';
const SHAPES = { chat: new RegExp(`^chatcmpl-${HEX}$`), messages: new RegExp(`^msg_${HEX}$`), responses: new RegExp(`^resp_${HEX}$`) };
const NATIVE = 'gen-5.6-terra';

let stack: InferenceStack;
let familyA: ApiAccount;
let familyB: ApiAccount;

beforeAll(async () => {
  stack = await startInferenceStack({ STATUS_PROBE_SECONDS: '0' }, { nativeResponses: [NATIVE] });
  const admin = await processAdmin(stack);
  familyA = await apiAccount(stack, admin, '5');
  familyB = await apiAccount(stack, admin, '5', { provider_family: 'family_b' });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

type Format = keyof typeof SHAPES;

/** Every id an answer shows: the body's, or each stream frame's (chat chunks, message_start, Responses' response objects). */
function idsOf(format: Format, text: string, stream: boolean): string[] {
  if (!stream) {
    const body = JSON.parse(text);
    return [body.id];
  }
  const frames = sseFrames(text).map((f) => f.data).filter((d) => typeof d === 'object' && d !== null);
  if (format === 'chat') return frames.map((d) => d.id);
  if (format === 'messages') return frames.filter((d) => d.type === 'message_start').map((d) => d.message.id);
  return frames.filter((d) => d.response).map((d) => d.response.id);
}

const PATHS: { name: string; format: Format; path: string; key: () => ApiAccount; body: (stream: boolean) => object }[] = [
  { name: 'chat, same format', format: 'chat', path: '/v1/chat/completions', key: () => familyA, body: (stream) => ({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=3]' }], stream }) },
  { name: 'chat, bridge (Anthropic upstream, translated)', format: 'chat', path: '/v1/bridge/chat/completions', key: () => familyB, body: (stream) => ({ model: 'bridge-opus-5', messages: [{ role: 'user', content: 'hi [sim:words=3]' }], stream }) },
  { name: 'messages, same format', format: 'messages', path: '/v1/messages', key: () => familyB, body: (stream) => ({ model: 'lm-opus-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi [sim:words=3]' }], stream }) },
  { name: 'messages, translated (OpenAI-compatible upstream)', format: 'messages', path: '/v1/messages', key: () => familyB, body: (stream) => ({ model: TRANSLATED_FAMILY_B, max_tokens: 50, messages: [{ role: 'user', content: 'hi [sim:words=3]' }], stream }) },
  { name: 'responses, translated (chat upstream)', format: 'responses', path: '/v1/responses', key: () => familyA, body: (stream) => ({ model: 'gen-5.6-luna', input: 'hi [sim:words=3]', stream }) },
  { name: 'responses, native', format: 'responses', path: '/v1/responses', key: () => familyA, body: (stream) => ({ model: NATIVE, input: 'hi [sim:words=3]', stream }) },
  { name: 'responses, bridge (Anthropic upstream, translated)', format: 'responses', path: '/v1/bridge/responses', key: () => familyB, body: (stream) => ({ model: 'bridge-opus-5', input: 'hi [sim:words=3]', stream }) },
];

describe('answer ids', () => {
  it.each(PATHS)('$name: JSON and stream carry one id of the exact shape', async ({ format, path, key, body }) => {
    for (const stream of [false, true]) {
      // rawCall sends a Messages request with x-api-key and anthropic-version, the others with Bearer.
      const result = await rawCall(stack.url, key().key, body(stream), { path });
      expect(result.status, result.text).toBe(200);
      const ids = idsOf(format, result.text, stream);
      expect(ids.length, `${path} ${stream ? 'stream' : 'json'}`).toBeGreaterThan(0);
      for (const id of ids) expect(id, `${path} ${stream ? 'stream' : 'json'}`).toMatch(SHAPES[format]);
      expect(new Set(ids).size).toBe(1);
    }
  });
});
