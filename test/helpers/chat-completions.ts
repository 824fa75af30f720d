import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import { expect } from 'vitest';
import { apiAccount, openaiClient, processAdmin, startInferenceStack, type ApiAccount, type InferenceStack } from './inference.js';

/** What the chat completions tests of the gateway process (test/e2e/chat-completions*.test.ts) share. */

/** Public cheap-group prices of gen-5.6-luna in the shipped catalog (SPEC.md 4.9), and its official list prices. */
export const LUNA = { input: '0.016', output: '0.04', cacheRead: '0.0016' };
export const LUNA_OFFICIAL = { input: '0.16', output: '0.4', cacheRead: '0.016' };

/** The DESIGN.md cost formula, written out independently of the gateway's code. */
export function expectedCost(prices: typeof LUNA, prompt: number, completion: number, cached = 0): Decimal {
  return new Decimal(prompt - cached)
    .times(prices.input)
    .plus(new Decimal(cached).times(prices.cacheRead))
    .plus(new Decimal(completion).times(prices.output))
    .dividedBy(1_000_000)
    .toDecimalPlaces(10, Decimal.ROUND_HALF_EVEN);
}

const WORDS = 'baikal is the deepest lake on earth and holds clear cold water'.split(' ');
/** The simulator's answer of n words. */
export const answer = (n: number) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(' ');

/** The status and our error code of a failed SDK call. */
export async function failureOf(call: Promise<unknown>): Promise<{ status: number | undefined; code: string | null | undefined; message: string; headers?: Headers }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status, code: error.code, message: error.message, headers: error.headers as Headers | undefined };
    throw error;
  }
  throw new Error('expected the call to fail');
}

/**
 * No canary (credential, upstream id, host, upstream model name, upstream error text) in anything the file's clients
 * received (at least `minimumBodies` bodies: the recording did record) nor in a user-visible record, after a few more
 * calls whose upstream answers carry the canary error text.
 */
export async function expectNothingPrivate(stack: InferenceStack, client: OpenAI, minimumBodies: number): Promise<void> {
  // A few more calls whose upstream answers carry the canary error text.
  for (const directive of ['[sim:status=401]', '[sim:status=404]', '[sim:status=503]', '[sim:status=422]']) {
    await failureOf(client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: `hi ${directive}` }] }));
  }
  const everything = stack.received.join('\n');
  expect(stack.received.length).toBeGreaterThan(minimumBodies);
  expect(everything).toContain('chatcmpl-');
  for (const canary of stack.canaries.all()) expect(everything, canary).not.toContain(canary);

  // User-visible records: every usage-event column except the operator-only upstream id, and the ledger.
  const rows = await stack.db.query(`select to_jsonb(e) - 'upstream_id' - 'upstream_credential_id' - 'upstream_cost_usd' as row from usage_events e union all select to_jsonb(t) from transactions t`);
  const records = JSON.stringify(rows);
  for (const canary of stack.canaries.all()) expect(records, canary).not.toContain(canary);
}

/** The gateway process with its simulator, an admin, and an account funded with $5 whose key drives an openai client. */
export async function startChatStack(): Promise<{ stack: InferenceStack; admin: { token: string; userId: string }; funded: ApiAccount; client: OpenAI }> {
  const stack = await startInferenceStack();
  const admin = await processAdmin(stack);
  const funded = await apiAccount(stack, admin, '5');
  return { stack, admin, funded, client: openaiClient(stack, funded.key) };
}
