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
  /** The key's monthly spend cap now (null: none). */
  cap: Decimal | null;
  /** Every cap the key had, each from when it was asked for (ms since the epoch): the cap at a moment is the last one asked for by then. */
  capHistory: { since: number; cap: Decimal }[];
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
/** Answers of max_tokens words: the output, priced alike in the hold and the cost, outweighs the prompt the hold over-counts (hold / cost about 1.4). */
const WORDS = 120;

/**
 * A request of the load: WORDS words of answer, JSON after 150 ms or a paced stream; `slow` ones stay at the
 * upstream about four times as long (more of them in flight when a fault lands).
 */
export function loadBody(i: number, stream: boolean, slow = false) {
  const pace = stream ? `chunk-delay=${slow ? 10 : 3}` : `latency=${slow ? 600 : 150}`;
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

/** A request sent and not answered yet: where it went, for whom. */
export interface InFlight {
  host: number;
  payer: number;
}

/** A group of clients and the payers (indexes into the payers) they spend for. */
export interface ClientGroup {
  clients: number;
  payers: number[];
  /** Requests that stay longer at the upstream (`loadBody`). */
  slow?: boolean;
}

/**
 * Each group's clients until `until()`: each request of a group goes to the next host and, every round of the
 * hosts, to the group’s next payer, JSON and streams alternating. A refused or failed client waits 250 ms, so
 * refusals do not swamp the hosts. `inFlight` has the requests sent and not answered yet.
 */
export async function runLoad(hosts: GatewayHost[], payers: Payer[], groups: ClientGroup[], until: () => boolean, received: string[], inFlight: Map<string, InFlight>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const started = Date.now();
  const run = randomBytes(4).toString('hex');
  let sent = 0;
  const client = async (group: ClientGroup, counter: { next: number }) => {
    while (!until()) {
      const i = counter.next++;
      const host = i % hosts.length;
      const payer = group.payers[Math.floor(i / hosts.length) % group.payers.length]!;
      const stream = i % 2 === 1;
      const rid = `test-hosts-${run}-${sent++}`;
      const sentAt = Date.now() - started;
      // A host cut from Redis may hold a request for as long as the cut; none may hold one past the test.
      inFlight.set(rid, { host, payer });
      const result = await rawCall(hosts[host]!.url, payers[payer]!.key, loadBody(i, stream, group.slow), { requestId: rid, abortAfterMs: 30_000, received });
      inFlight.delete(rid);
      const outcome: Outcome = { rid, host, payer, stream, status: result.status, ...classify(result, stream), sentAt, at: Date.now() - started };
      outcomes.push(outcome);
      if (!outcome.answered) await sleep(250);
    }
  };
  await Promise.all(
    groups.flatMap((group) => {
      const counter = { next: 0 };
      return Array.from({ length: group.clients }, () => client(group, counter));
    }),
  );
  return outcomes;
}

export interface Invariants {
  /** Accounts below minus their credit line at the end. */
  belowCredit: string[];
  /** Keys whose month spend passed their cap at the end. */
  pastCap: string[];
  /** Accounts whose balance, replayed over their ledger in order, went below minus their credit line on the way. */
  dippedBelowCredit: string[];
  /** Keys whose month spend, replayed over the ledger, passed the cap they had at that moment. */
  passedCapOnTheWay: string[];
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
export async function checkInvariants(db: TestDatabase, payers: Payer[], outcomes: Outcome[], started: number): Promise<Invariants> {
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
    ...(await ledgerOverTime(db, payers, started)),
    answeredNotBilledOnce,
    refusedBilled,
    money: await moneyReport(db),
    unansweredBilled,
    payers: figures,
  };
}

/**
 * The balance and the key's month spend replayed over each payer's ledger rows in order (`created_at`, then id).
 * An end state can hide an overspend that a later top-up repaid; the replay cannot. The order is on the safe
 * side: a credit is dated when its transaction began, before any request could be admitted against it, and a
 * usage debit when the last request it covers was answered, after they were all admitted; a cap counts from
 * when the raise was asked for. So a replay below the line is spending no admission should have let through.
 */
async function ledgerOverTime(db: TestDatabase, payers: Payer[], started: number): Promise<Pick<Invariants, 'dippedBelowCredit' | 'passedCapOnTheWay'>> {
  const rows = await db.query<{ user_id: string; api_key_id: string | null; kind: string; amount_usd: string; created_at: Date }>(
    'select user_id, api_key_id, kind, amount_usd::text, created_at from transactions where user_id = any($1) order by created_at, id',
    [payers.map((p) => p.userId)],
  );
  const when = (at: Date) => `${((at.getTime() - started) / 1000).toFixed(1)} s into the load`;
  const dippedBelowCredit: string[] = [];
  const passedCapOnTheWay: string[] = [];
  for (const payer of payers) {
    let balance = new Decimal(0);
    let spent = new Decimal(0);
    let lowest: { balance: Decimal; at: Date } | null = null;
    let worstCap: { spent: Decimal; cap: Decimal; at: Date } | null = null;
    for (const row of rows.filter((r) => r.user_id === payer.userId)) {
      balance = balance.plus(row.amount_usd);
      if (!lowest || balance.lessThan(lowest.balance)) lowest = { balance, at: row.created_at };
      if (row.kind !== 'usage' || row.api_key_id !== payer.keyId || !payer.capHistory.length) continue;
      spent = spent.minus(row.amount_usd);
      const cap = payer.capHistory.filter((c) => c.since <= row.created_at.getTime()).at(-1)!.cap;
      if (spent.greaterThan(cap) && (!worstCap || spent.minus(cap).greaterThan(worstCap.spent.minus(worstCap.cap)))) worstCap = { spent, cap, at: row.created_at };
    }
    if (lowest && lowest.balance.lessThan(payer.credit.negated())) dippedBelowCredit.push(`${payer.label}: ${lowest.balance.toFixed(10)} at ${when(lowest.at)} (credit line ${payer.credit.toFixed(10)})`);
    if (worstCap) passedCapOnTheWay.push(`${payer.label}: spent ${worstCap.spent.toFixed(10)} of a cap of ${worstCap.cap.toFixed(10)} at ${when(worstCap.at)}`);
  }
  return { dippedBelowCredit, passedCapOnTheWay };
}
