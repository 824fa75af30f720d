import { randomBytes } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { TestDatabase } from '../helpers/db.js';
import type { GatewayHost } from '../helpers/hosts.js';
import { eventsByRequest, moneyReport, rawCall, sleep, type MoneyReport } from '../helpers/reliability.js';

/**
 * The load and the money checks of the several-hosts test (hosts.test.ts): clients spread over the hosts,
 * every request's outcome as the client saw it, and the invariants read back from PostgreSQL.
 */

/** One account and its one key, with the limits money may not pass. */
export interface Payer {
  label: string;
  userId: string;
  key: string;
  keyId: string;
  /** The trusted-partner credit line (0: none): the balance may go down to minus this, never below. */
  credit: Decimal;
  /** The key's monthly spend cap (null: none). */
  cap: Decimal | null;
}

export interface Outcome {
  rid: string;
  host: number;
  payer: number;
  stream: boolean;
  status: number;
  /** Our error code of a refusal, or what else went wrong (`connection`, `cut stream`, ...). */
  code: string | null;
  /** A complete answer with its usage (JSON: a body with `usage`; a stream: a usage frame and [DONE], no error frame). */
  answered: boolean;
  usage: { prompt: number; completion: number } | null;
  /** Milliseconds since the load started, when the request was sent. */
  sentAt: number;
  /** Milliseconds since the load started, when the client had the whole answer. */
  at: number;
}

export const MODEL = 'gen-5.6-luna';
const WORDS = 40;

/** A request of the load: 40 words of answer (its hold and its cost nearly equal), JSON after 150 ms or a paced stream. */
export function loadBody(i: number, stream: boolean) {
  const pace = stream ? 'chunk-delay=8' : 'latency=150';
  return {
    model: MODEL,
    max_tokens: WORDS,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    messages: [{ role: 'user', content: `load ${i} [sim:words=${WORDS} ${pace}]` }],
  };
}

function classify(result: Awaited<ReturnType<typeof rawCall>>, stream: boolean): Pick<Outcome, 'code' | 'answered' | 'usage'> {
  if (result.status === 0) return { code: result.error?.includes('abort') ? 'client timeout' : 'connection', answered: false, usage: null };
  if (result.status !== 200) {
    // `/v1` refusals carry `error.code`; a host starting or draining answers `{ detail, code }` (src/readiness.ts).
    const code = (() => {
      try {
        const body = JSON.parse(result.text) as { error?: { code?: string }; code?: string };
        return body.error?.code ?? body.code ?? `http ${result.status}: ${result.text.slice(0, 80)}`;
      } catch {
        return `http ${result.status}: ${result.text.slice(0, 80)}`;
      }
    })();
    return { code, answered: false, usage: null };
  }
  const usageOf = (u: any) => (u ? { prompt: Number(u.prompt_tokens), completion: Number(u.completion_tokens) } : null);
  if (!stream) {
    try {
      const usage = usageOf((JSON.parse(result.text) as { usage?: unknown }).usage);
      return { code: usage ? null : 'no usage', answered: Boolean(usage), usage };
    } catch {
      return { code: 'cut body', answered: false, usage: null };
    }
  }
  const usage = usageOf(result.frames.find((f) => f?.usage)?.usage);
  const complete = result.frames.at(-1) === '[DONE]' && !result.frames.some((f) => f?.error) && usage !== null;
  return { code: complete ? null : 'cut stream', answered: complete, usage: complete ? usage : null };
}

/**
 * `clients` concurrent clients until `until()`: each request goes to the next host and the next payer in turn,
 * JSON and streams alternating. A refused or failed client waits a little, so refusals do not swamp the hosts.
 */
export async function runLoad(hosts: GatewayHost[], payers: Payer[], clients: number, until: () => boolean, received: string[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const started = Date.now();
  const run = randomBytes(4).toString('hex');
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!until()) {
        const i = next++;
        const host = i % hosts.length;
        const payer = Math.floor(i / hosts.length) % payers.length;
        const stream = i % 2 === 1;
        const rid = `test-hosts-${run}-${i}`;
        const sentAt = Date.now() - started;
        // A host cut from Redis may hold a request for as long as the cut; none may hold one past the test.
        const result = await rawCall(hosts[host]!.url, payers[payer]!.key, loadBody(i, stream), { requestId: rid, abortAfterMs: 30_000, received });
        const outcome: Outcome = { rid, host, payer, stream, status: result.status, ...classify(result, stream), sentAt, at: Date.now() - started };
        outcomes.push(outcome);
        if (!outcome.answered) await sleep(outcome.status === 0 ? 200 : 100);
      }
    }),
  );
  return outcomes;
}

export interface Invariants {
  /** Accounts below minus their credit line. */
  belowCredit: string[];
  /** Keys whose month spend passed their cap. */
  pastCap: string[];
  /** Answered requests without exactly one billed usage event of the tokens the client was told. */
  answeredNotBilledOnce: string[];
  /** Refused requests with a billed usage event. */
  refusedBilled: string[];
  money: MoneyReport;
  /** Requests neither answered nor refused (cut by a kill, a client timeout) that were billed anyway, for the table. */
  unansweredBilled: number;
  /** Each payer's figures, for the table. */
  payers: { label: string; balance: string; credit: string; cap: string; spent: string; answered: number; firstMoneyRefusal: string }[];
}

/** The invariants over the whole database, and each payer's figures. */
export async function checkInvariants(db: TestDatabase, payers: Payer[], outcomes: Outcome[]): Promise<Invariants> {
  const events = await eventsByRequest(db, outcomes.map((o) => o.rid));
  const billed = (rid: string) => (events.get(rid) ?? []).filter((e) => new Decimal(e.amount_usd).greaterThan(0));
  const answeredNotBilledOnce = outcomes
    .filter((o) => o.answered)
    .filter((o) => {
      const list = events.get(o.rid) ?? [];
      const [event] = list;
      return list.length !== 1 || billed(o.rid).length !== 1 || !event!.transaction_id || event!.prompt_tokens !== o.usage!.prompt || event!.completion_tokens !== o.usage!.completion;
    })
    .map((o) => `${o.rid} (host ${o.host + 1}, ${o.stream ? 'stream' : 'JSON'}, answered at ${o.at} ms): ${(events.get(o.rid) ?? []).length} events, ${billed(o.rid).length} billed`);
  const refusedBilled = outcomes.filter((o) => o.status >= 400 && billed(o.rid).length > 0).map((o) => `${o.rid}: ${o.status} ${o.code}`);
  const unansweredBilled = outcomes.filter((o) => !o.answered && o.status < 400 && billed(o.rid).length > 0).length;
  const rows = await db.query<{ id: string; balance: string; credit: string; spent: string }>(
    `select u.id, (u.balance_paid_usd + u.balance_bonus_usd)::text balance,
            (case when u.trusted_partner_until > now() then u.credit_limit_usd else 0 end)::text credit,
            coalesce((select -sum(t.amount_usd) from transactions t where t.user_id = u.id and t.kind = 'usage'
                       and t.created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'), 0)::text spent
       from users u where u.id = any($1)`,
    [payers.map((p) => p.userId)],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const figures = payers.map((p, i) => {
    const row = byId.get(p.userId)!;
    const own = outcomes.filter((o) => o.payer === i);
    const seconds = (list: Outcome[]) => (list.length ? `${(Math.min(...list.map((o) => o.at)) / 1000).toFixed(1)} s` : 'never');
    return {
      label: p.label,
      balance: row.balance,
      credit: row.credit,
      cap: p.cap?.toFixed(10) ?? '-',
      spent: row.spent,
      answered: own.filter((o) => o.answered).length,
      firstMoneyRefusal: seconds(own.filter((o) => o.code === 'insufficient_balance' || o.code === 'spend_cap_reached')),
    };
  });
  return {
    belowCredit: figures.filter((f) => new Decimal(f.balance).lessThan(new Decimal(f.credit).negated())).map((f) => `${f.label}: balance ${f.balance}, credit line ${f.credit}`),
    // One key per payer: the account's usage debits this month are its key's.
    pastCap: payers.flatMap((p, i) => (p.cap && new Decimal(figures[i]!.spent).greaterThan(p.cap) ? [`${p.label}: spent ${figures[i]!.spent} of a cap of ${p.cap.toFixed(10)}`] : [])),
    answeredNotBilledOnce,
    refusedBilled,
    money: await moneyReport(db),
    unansweredBilled,
    payers: figures,
  };
}
