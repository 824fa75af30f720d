import { randomBytes } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { TestDatabase } from './db.js';

/**
 * Shared pieces of the reliability suite (test/reliability): raw streaming calls a test can cut at
 * any point, the gateway's own gauges, and the money invariants checked after every fault scenario.
 */

/** The operator token the reliability stacks start with, to read /metrics. */
export const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a truthy value, or throws with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 50): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** One sample of a gauge or counter from /metrics (summed over its label sets). */
export async function metric(url: string, name: string, token = METRICS_TOKEN): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  let sum = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) {
      sum += Number(line.split(' ').pop());
      seen = true;
    }
  }
  if (!seen) throw new Error(`no metric ${name}`);
  return sum;
}

/** Waits until the gateway holds no concurrency slot and no balance hold; returns how long that took. */
export async function waitIdle(url: string, timeoutMs = 5_000): Promise<number> {
  const started = Date.now();
  await waitFor('slots and holds back to zero', async () => (await metric(url, 'baikal_concurrency_slots')) === 0 && (await metric(url, 'baikal_holds_active')) === 0, timeoutMs);
  return Date.now() - started;
}

/** A chat request body with a per-request tag in the prompt, so the simulator's record of it can be found. */
export function chatBody(prompt: string, options: { stream?: boolean; maxTokens?: number; model?: string; includeUsage?: boolean } = {}) {
  return {
    model: options.model ?? 'gen-5.6-luna',
    messages: [{ role: 'user', content: prompt }],
    ...(options.stream ? { stream: true } : {}),
    ...(options.includeUsage ? { stream_options: { include_usage: true } } : {}),
    ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}),
  };
}

export interface RawResult {
  status: number;
  headers: Headers;
  /** Everything the client received (the whole body, or what it read before it stopped). */
  text: string;
  /** The content the client assembled from the stream's data frames (OpenAI chat chunks or Anthropic deltas). */
  content: string;
  /** Data frames parsed as JSON (malformed ones are kept as `{ unparsed: text }`). */
  frames: any[];
  /** The SSE event names seen (Anthropic streams), in order. */
  events: string[];
  /** Set when the client aborted: `Date.now()` at the abort. */
  abortedAt?: number;
  error?: string;
}

/** Splits an SSE text into its frames: the event name (if any) and the data parsed as JSON. */
export function sseFrames(text: string): { event: string | null; data: any }[] {
  const frames: { event: string | null; data: any }[] = [];
  for (const block of text.split(/\n\n/)) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (!data.length) continue;
    const raw = data.join('\n');
    let parsed: any;
    try {
      parsed = raw === '[DONE]' ? '[DONE]' : JSON.parse(raw);
    } catch {
      parsed = { unparsed: raw };
    }
    frames.push({ event, data: parsed });
  }
  return frames;
}

function contentOf(frames: { event: string | null; data: any }[]): string {
  let content = '';
  for (const { data } of frames) {
    if (typeof data !== 'object' || data === null) continue;
    content += data.choices?.[0]?.delta?.content ?? '';
    if (data.type === 'content_block_delta' && data.delta?.type === 'text_delta') content += data.delta.text;
  }
  return content;
}

export interface RawCallOptions {
  path?: string;
  headers?: Record<string, string>;
  requestId?: string;
  /** Abort after this many data frames were read (0: right after the response headers). */
  abortAfterFrames?: number;
  /** Abort after this many ms from the start, wherever the request is. */
  abortAfterMs?: number;
  /** Wait this long between reads (a slow reader). */
  readDelayMs?: number;
  /** Collected bodies, for the leak search. */
  received?: string[];
}

/**
 * One inference call by plain fetch, read chunk by chunk, which the caller may abort at a given frame
 * or time, or read slowly. Never throws for a failed or aborted call: the result says what happened.
 */
export async function rawCall(url: string, key: string, body: unknown, options: RawCallOptions = {}): Promise<RawResult> {
  const path = options.path ?? '/v1/chat/completions';
  const messages = path.endsWith('/messages');
  const controller = new AbortController();
  let abortedAt: number | undefined;
  const abort = () => {
    abortedAt ??= Date.now();
    controller.abort();
  };
  const timer = options.abortAfterMs !== undefined ? setTimeout(abort, options.abortAfterMs) : undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(messages ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` }),
    ...(options.requestId ? { 'x-request-id': options.requestId } : {}),
    ...options.headers,
  };
  let text = '';
  let status = 0;
  let responseHeaders = new Headers();
  let error: string | undefined;
  try {
    const response = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
    status = response.status;
    responseHeaders = response.headers;
    if (options.abortAfterFrames === 0) abort();
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (options.abortAfterFrames !== undefined && (text.match(/\n\n/g) ?? []).length >= options.abortAfterFrames) {
        abort();
        break;
      }
      if (options.readDelayMs) await sleep(options.readDelayMs);
    }
  } catch (caught) {
    if (!controller.signal.aborted) error = String(caught);
  } finally {
    if (timer) clearTimeout(timer);
  }
  options.received?.push(text);
  const frames = sseFrames(text);
  return { status, headers: responseHeaders, text, content: contentOf(frames), frames: frames.map((f) => f.data), events: frames.map((f) => f.event ?? ''), abortedAt, error };
}

/** The DESIGN.md cost formula, written out independently of the gateway's code. */
export function tokenCost(prices: { input: string; output: string; cacheRead?: string }, prompt: number, completion: number, cached = 0): Decimal {
  return new Decimal(prompt - cached)
    .times(prices.input)
    .plus(new Decimal(cached).times(prices.cacheRead ?? prices.input))
    .plus(new Decimal(completion).times(prices.output))
    .dividedBy(1_000_000)
    .toDecimalPlaces(10, Decimal.ROUND_HALF_EVEN);
}

export interface MoneyReport {
  accounts: number;
  usageEvents: number;
  billedEvents: number;
  usageTransactions: number;
  /** Accounts whose stored balance differs from the sum of their ledger (or paid/bonus split). */
  balanceMismatches: string[];
  /** Billed events that name no ledger debit, or usage debits whose amount is not minus the sum of the events they cover. */
  settlementMismatches: string[];
  /** Request ids that have more than one usage event. */
  duplicateRequests: string[];
  /** Durable holds still active past their expiry. */
  expiredActiveHolds: number;
}

/**
 * DESIGN.md's money invariants over a whole database, with plain SQL: for every account the stored
 * balance (paid and bonus) equals the sum of its ledger; every billed usage event names its debit and
 * every usage debit is exactly minus the sum of the events that name it; no request id was settled twice;
 * no durable hold outlived its expiry.
 */
export async function moneyReport(db: TestDatabase): Promise<MoneyReport> {
  const mismatched = await db.query<{ id: string }>(
    `select u.id from users u
       left join (select user_id, sum(amount_usd) a, sum(paid_usd) p, sum(bonus_usd) b from transactions group by user_id) t on t.user_id = u.id
      where u.balance_paid_usd + u.balance_bonus_usd <> coalesce(t.a, 0) or u.balance_paid_usd <> coalesce(t.p, 0) or u.balance_bonus_usd <> coalesce(t.b, 0)`,
  );
  // A usage batch posts one debit per account, key and month, each billed event naming it (src/usage/usage-recorder.ts).
  const settlement = await db.query<{ what: string }>(
    `select 'event ' || e.id || ' billed ' || e.amount_usd || ' names no debit' as what
       from usage_events e where e.amount_usd > 0 and not exists (select 1 from transactions t where t.id = e.transaction_id)
     union all
     select 'event ' || e.id || ' of zero names a debit' from usage_events e where e.amount_usd = 0 and e.transaction_id is not null
     union all
     select 'usage debit ' || t.idempotency_key || ' of ' || t.amount_usd || ' covers ' || coalesce((-sum(e.amount_usd))::text, 'no event')
       from transactions t left join usage_events e on e.transaction_id = t.id
      where t.idempotency_key like 'usage-batch:%' group by t.id having t.amount_usd is distinct from -sum(e.amount_usd)`,
  );
  const duplicates = await db.query<{ request_id: string }>(`select request_id from usage_events group by request_id having count(*) > 1`);
  const [counts] = await db.query<{ accounts: number; events: number; billed: number; debits: number; holds: number }>(
    `select (select count(*)::int from users) accounts,
            (select count(*)::int from usage_events) events,
            (select count(*)::int from usage_events where amount_usd > 0) billed,
            (select count(*)::int from transactions where idempotency_key like 'usage-batch:%') debits,
            (select count(*)::int from holds where status = 'active' and expires_at < now()) holds`,
  );
  return {
    accounts: counts!.accounts,
    usageEvents: counts!.events,
    billedEvents: counts!.billed,
    usageTransactions: counts!.debits,
    balanceMismatches: mismatched.map((r) => r.id),
    settlementMismatches: settlement.map((r) => r.what),
    duplicateRequests: duplicates.map((r) => r.request_id),
    expiredActiveHolds: counts!.holds,
  };
}

/** The usage events of these request ids, by request id (each id's events, to count settlements). */
export async function eventsByRequest(db: TestDatabase, requestIds: string[]): Promise<Map<string, Record<string, any>[]>> {
  const rows = await db.query<Record<string, any>>('select * from usage_events where request_id = any($1)', [requestIds]);
  const byId = new Map<string, Record<string, any>[]>();
  for (const row of rows) byId.set(row.request_id, [...(byId.get(row.request_id) ?? []), row]);
  return byId;
}

/** Every canary found in these texts, with where it was found. */
export function leaks(texts: string[], canaries: string[]): string[] {
  const found: string[] = [];
  for (const [i, text] of texts.entries()) for (const canary of canaries) if (text.includes(canary)) found.push(`${canary} in body ${i}: ${text.slice(0, 200)}`);
  return found;
}
