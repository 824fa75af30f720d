import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAccount, processAdmin, requestId, startInferenceStack, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { decode, startReceiver, type DecodedSpan, type Receiver } from '../helpers/otlp.js';
import { chatBody, rawCall, waitFor } from '../helpers/reliability.js';

/**
 * Issue 52, item 6: the gateway process, started with OTEL_EXPORTER_OTLP_ENDPOINT, sends a trace of each
 * /v1 request to the operator's collector (here a local OTLP/HTTP receiver): the request span with its
 * admission, every upstream attempt (a failover shows two) and settlement, under the GenAI conventions;
 * no credential, prompt or upstream error text in any of it.
 */
let stack: InferenceStack;
let receiver: Receiver;
let account: ApiAccount;

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startInferenceStack({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'baikal-e2e', STATUS_PROBE_SECONDS: '0' });
  const admin = await processAdmin(stack);
  account = await apiAccount(stack, admin, '5');
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

async function spansOf(rid: string): Promise<DecodedSpan[]> {
  return waitFor(`the trace of ${rid}`, () => {
    const { spans } = decode(receiver.received);
    const request = spans.find((s) => s.attributes['baikal.request.id'] === rid);
    if (!request) return null;
    const family = spans.filter((s) => s.traceId === request.traceId);
    return family.some((s) => s.name === 'baikal.settlement') ? family : null;
  });
}

describe('traces of /v1 requests', () => {
  it('a request that fails over: request, admission, two attempts (the first failed), settlement; GenAI attributes; nothing secret', async () => {
    const rid = requestId('trace');
    const prompt = `trace me [sim:words=5 status=500 only=primary]`;
    const result = await rawCall(stack.url, account.key, chatBody(prompt), { requestId: rid });
    expect(result.status).toBe(200);
    const spans = await spansOf(rid);
    const request = spans.find((s) => !s.parentSpanId)!;
    expect(request.name).toBe('chat gen-5.6-luna');
    expect(request.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gen-5.6-luna', 'gen_ai.usage.output_tokens': 5 });
    const children = spans.filter((s) => s.parentSpanId === request.spanId);
    expect(children.map((s) => s.name).sort()).toEqual(['baikal.admission', 'baikal.settlement', 'baikal.upstream_attempt', 'baikal.upstream_attempt'].sort());
    const attempts = children.filter((s) => s.name === 'baikal.upstream_attempt').sort((a, b) => Number(a.start - b.start));
    expect(attempts.map((s) => s.attributes['baikal.upstream.id'])).toEqual([stack.canaries.upstreamIds[0], stack.canaries.upstreamIds[1]]);
    expect(attempts.map((s) => s.attributes['baikal.upstream.credential'])).toEqual(['env:CANARY_PRIMARY_KEY', 'env:CANARY_BACKUP_KEY']);
    expect(attempts[0]!.status).toBe(2); // ERROR
    expect(attempts[1]!.status).toBe(0);
    // Traces go to the operator, so upstream ids may be in them; credentials, prompts and upstream error texts never.
    const everything = receiver.received.map((r) => r.raw).join('\n');
    for (const secret of [stack.canaries.credential, stack.canaries.backupCredential, stack.canaries.errorDetail, 'trace me']) expect(everything).not.toContain(secret);
  });

  it('a refusal ends its trace at admission', async () => {
    const rid = requestId('trace-refused');
    const result = await rawCall(stack.url, account.key, chatBody('x', { model: 'no-such-model' }), { requestId: rid });
    expect(result.status).toBe(404);
    const { spans } = await waitFor('the refused trace', () => {
      const decoded = decode(receiver.received);
      return decoded.spans.some((s) => s.attributes['baikal.request.id'] === rid) ? decoded : null;
    });
    const request = spans.find((s) => s.attributes['baikal.request.id'] === rid)!;
    const children = spans.filter((s) => s.parentSpanId === request.spanId);
    expect(children.map((s) => s.name)).toEqual(['baikal.admission']);
    expect(request.attributes['error.type']).toBe('model_not_found');
  });
});
