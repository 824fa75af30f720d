import type { MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';
import pg from 'pg';
import { APPENDED_ROWS, PostingBatch, UUID_V7, type AppendedRow, type OnConflict } from '../ledger/ledger.js';
import { USAGE_BATCH_KEY_PREFIX } from '../ledger/kinds.js';
import { UsageJournal } from './usage-journal.js';
import type { Metrics } from '../metrics.js';
import type { Logger } from '../shared/logging.js';

export type UsageStatus = 'pending' | 'success' | 'error' | 'cancelled';

/** One inference request as SPEC.md's Usage event describes it, plus who made it and (for operators) where it went. */
export interface UsageRecord {
  id: string;
  userId: string;
  apiKeyId: string | null;
  requestId: string;
  clientSurface: string;
  createdAt: Date;
  completedAt: Date | null;
  providerFamily: string;
  routeGroup: string | null;
  routeGroupLabel: string;
  endpoint: string | null;
  model: string;
  status: UsageStatus;
  errorCode: string | null;
  latencyMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  totalTokens: number | null;
  cacheHitRatio: string | null;
  publicInputUsdPer1m: string;
  publicOutputUsdPer1m: string;
  publicCacheReadUsdPer1m: string | null;
  publicCacheWriteUsdPer1m: string | null;
  publicRequestUsdPerGeneration: string | null;
  /** What the user pays; posted to the ledger (kind `usage`) when above zero. */
  amountUsd: string;
  officialCostUsd: string | null;
  savedUsd: string | null;
  /** Operator-only: the upstream that served the request. Never shown to users. */
  upstreamId: string | null;
  /** Operator-only: the credential of its pool that served it (`env:NAME` or a stored credential's id). */
  upstreamCredentialId?: string | null;
  /** Operator-only: the upstream's own price of the request (null: the upstream has no price for it). */
  upstreamCostUsd?: string | null;
  /** Set when the charge was already posted to the ledger (a video settlement): the event links to it, nothing more is debited. */
  transactionId?: string | null;
}

/**
 * How many records at most one batch writes. Records wait for a batch at most `flushMs` (USAGE_FLUSH_MS,
 * default 100): at a few hundred requests a second a batch then carries dozens of records, and
 * PostgreSQL's fixed cost per transaction (the account locks, the batch's statement, the commit's WAL flush) is paid
 * once for all of them instead of once every few requests.
 */
const MAX_BATCH = 500;
const DEFAULT_FLUSH_MS = 100;
const RETRY_MS = 1_000;

/** usage_events columns, the UsageRecord field each is read from, and its type. */
const EVENT_FIELDS = [
  ['id', 'id', 'uuid'], ['user_id', 'userId', 'uuid'], ['api_key_id', 'apiKeyId', 'uuid'], ['request_id', 'requestId', 'text'],
  ['client_surface', 'clientSurface', 'text'], ['created_at', 'createdAt', 'timestamptz'], ['completed_at', 'completedAt', 'timestamptz'],
  ['provider_family', 'providerFamily', 'text'], ['route_group', 'routeGroup', 'text'], ['route_group_label', 'routeGroupLabel', 'text'],
  ['endpoint', 'endpoint', 'text'], ['model', 'model', 'text'], ['status', 'status', 'text'], ['error_code', 'errorCode', 'text'],
  ['latency_ms', 'latencyMs', 'int4'], ['prompt_tokens', 'promptTokens', 'int4'], ['completion_tokens', 'completionTokens', 'int4'],
  ['cache_read_tokens', 'cacheReadTokens', 'int4'], ['cache_write_tokens', 'cacheWriteTokens', 'int4'], ['total_tokens', 'totalTokens', 'int4'],
  ['cache_hit_ratio', 'cacheHitRatio', 'numeric'], ['public_input_usd_per_1m', 'publicInputUsdPer1m', 'numeric'],
  ['public_output_usd_per_1m', 'publicOutputUsdPer1m', 'numeric'], ['public_cache_read_usd_per_1m', 'publicCacheReadUsdPer1m', 'numeric'],
  ['public_cache_write_usd_per_1m', 'publicCacheWriteUsdPer1m', 'numeric'], ['public_request_usd_per_generation', 'publicRequestUsdPerGeneration', 'numeric'],
  ['amount_usd', 'amountUsd', 'numeric'], ['official_cost_usd', 'officialCostUsd', 'numeric'], ['saved_usd', 'savedUsd', 'numeric'],
  ['transaction_id', 'transactionId', 'uuid'], ['upstream_id', 'upstreamId', 'text'],
  ['upstream_credential_id', 'upstreamCredentialId', 'text'], ['upstream_cost_usd', 'upstreamCostUsd', 'numeric'],
] as const satisfies readonly (readonly [string, keyof UsageRecord, string])[];

/**
 * The batch as rows, in queue order (`n`): the records travel as one JSON array of arrays, each record's
 * values in `EVENT_FIELDS` order (serialised natively as it is queued, the batch's bytes put together when
 * written: `batchJson`), which PostgreSQL parses once as `jsonb` and reads by position. Objects read with
 * `json_to_recordset` cost PostgreSQL 13-17 us a record to read against 7 us for this (a batch of 100
 * one-account records, the backend's CPU; about 4 us of the whole statement's ~45), and the gateway writes
 * 334 bytes a record instead of 793. Times travel as epoch milliseconds (see `recordJson`) and become
 * timestamps here.
 */
const RECORDS = `select ${EVENT_FIELDS.map(([, field, type], at) => (type === 'timestamptz' ? `timestamptz 'epoch' + (r.e->>${at})::int8 * interval '1 millisecond'` : type === 'text' ? `r.e->>${at}` : `(r.e->>${at})::${type}`) + ` as "${field}"`).join(', ')}, r.n
                   from jsonb_array_elements($1::jsonb) with ordinality as r(e, n)`;

const FIELD_NAMES: readonly (keyof UsageRecord)[] = EVENT_FIELDS.map(([, field]) => field);

/**
 * A record's JSON for its batch: its values in `EVENT_FIELDS` order. Its two Dates go as epoch milliseconds:
 * a Date sends JSON.stringify off its fast path (a `toJSON` call each), which made serialising a record 2.5
 * times slower. An absent `transactionId` goes as null (JSON.stringify writes `undefined` in an array so).
 */
function recordJson(record: UsageRecord): string {
  const values: unknown[] = [];
  for (const field of FIELD_NAMES) {
    const value = record[field];
    values.push(value instanceof Date ? value.getTime() : value);
  }
  return JSON.stringify(values);
}

/**
 * A record waiting for its batch: already serialised (one record's work as it finishes, instead of a
 * whole batch's at once on the event loop when the batch is written), and its account. A batch locks every
 * account it names, not only those `BILLED` debits: a superset by construction, so the rule lives in SQL alone.
 */
interface QueuedRecord {
  json: string;
  /** Its JSON's length in UTF-8. */
  bytes: number;
  userId: string;
}

/**
 * A batch's records as one JSON array, in UTF-8 bytes: a Buffer parameter travels in PostgreSQL's binary
 * format, which for `jsonb` is a version byte (1) and then the text. Not a joined string: a batch's text
 * can be larger than V8's largest young-generation object (128 KiB), and every such string went straight
 * to the old generation (its large-object space grew 0.8-0.9 MB every half second at JSON saturation,
 * with records of objects) and brought the next mark-compact closer: each a 60-150 ms pause and as much
 * again in marking steps on a one-core gateway. A Buffer's bytes live outside the heap and are freed with
 * the small object holding them, in the next scavenge; the join and the driver's string-to-bytes copy are
 * gone as well.
 */
function batchJson(batch: readonly QueuedRecord[]): Buffer {
  let size = 2 + batch.length;
  for (const queued of batch) size += queued.bytes;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  out[at++] = 1; // jsonb's binary format version
  out[at++] = 0x5b; // [
  for (let i = 0; i < batch.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    at += out.write(batch[i]!.json, at, 'utf8');
  }
  out[at] = 0x5d; // ]
  return out;
}

/**
 * A billed record's charge is posted with the others of its batch that share its account, key, provider
 * family and UTC month: one ledger row (`USAGE_BATCH_KEY_PREFIX` + its id), whose amount is exactly the sum of the
 * events it covers, each event naming it (`transaction_id`). A row per request was half of PostgreSQL's
 * work per request (a heap row and four index entries); the key and month keep the per-key monthly
 * spend (summed from the ledger) exact. The per-request detail stays in the events, which
 * GET /auth/transactions shows in place of the batch rows (src/accounts/accounts.service.ts).
 */
const DEBIT_GROUP = `r."userId", r."apiKeyId", r."providerFamily", date_trunc('month', coalesce(r."completedAt", r."createdAt") at time zone 'utc')`;

/**
 * A debit's token total: null when no event reported one, kept within the column's range (a batch of 500
 * long-context requests could pass it; the exact figures are the events').
 */
const TOKEN_TOTAL = (column: string) => `(case when sum(i.${column}) > 2147483647 then 2147483647 else sum(i.${column}) end)::int4`;

/** Records whose charge a batch debit covers: a charge above zero not already posted (a video settlement posts its own). */
const BILLED = `r."transactionId" is null and r."amountUsd" > 0`;

/**
 * A batch in one statement (its own transaction, one round trip), so PostgreSQL reads the JSON once:
 * the events, each billed one naming the debit of its group (`debits`, whose ids are drawn first); then
 * one `usage` debit per group, summed from the events actually inserted, posted by the ledger
 * (src/ledger/ledger.ts: accounts locked in id order, bonus first, balances moved by exactly the rows
 * appended); then the hourly rollups, moved by exactly the events inserted. A replayed batch inserts
 * only the events not written before, so its debits cover exactly those (a record is charged once: its
 * event's (id, created_at) is the primary key, and a replay sends both unchanged; usage_events is partitioned by
 * created_at, whose unique keys must hold it). Its text never changes with the batch size, so it is parsed and planned
 * once per connection (a named prepared statement).
 */
const USAGE_BATCH = new PostingBatch(
  'usage_batch',
  `select d.id, d.user_id, -sum(i.amount_usd) as amount_usd, null::text as bucket, 'usage'::text as kind, '${USAGE_BATCH_KEY_PREFIX}' || d.id as idempotency_key,
          d.api_key_id, d.provider, case when count(distinct i.model) = 1 then min(i.model) end as model,
          ${TOKEN_TOTAL('prompt_tokens')} as prompt_tokens, ${TOKEN_TOTAL('completion_tokens')} as completion_tokens,
          null::text as note, max(coalesce(i.completed_at, i.created_at)) as created_at, row_number() over (order by d.id) as n
     from debits d join inserted i on i.transaction_id = d.id
    group by d.id, d.user_id, d.api_key_id, d.provider`,
  {
    items: (onConflict: OnConflict) => `records as materialized (${RECORDS}),
           debits as materialized (
             select ${UUID_V7} as id, g.* from (select distinct ${DEBIT_GROUP} from records r where ${BILLED}) as g(user_id, api_key_id, provider, month)),
           inserted as (
             insert into usage_events (${EVENT_FIELDS.map(([column]) => column).join(', ')})
             select ${EVENT_FIELDS.map(([, field]) => (field === 'transactionId' ? `coalesce(r."transactionId", d.id)` : `r."${field}"`)).join(', ')}
               from records r left join debits d
                 on ${BILLED} and (d.user_id, d.api_key_id, d.provider, d.month) is not distinct from (${DEBIT_GROUP})
             ${onConflict('id, created_at')}
             returning id, user_id, transaction_id, created_at, completed_at, model, route_group, provider_family, amount_usd,
                       prompt_tokens, completion_tokens, cache_read_tokens, cache_write_tokens, official_cost_usd)`,
    then: () => `, hourly as (insert into usage_hourly
           select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family,
                  count(*), sum(amount_usd), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
                  coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
                  count(official_cost_usd), coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0),
                  coalesce(sum(official_cost_usd), 0)
             from inserted group by 1, 2, 3, 4, 5
           on conflict (user_id, hour, model, route_group, provider_family) do update set
             requests = usage_hourly.requests + excluded.requests,
             spend_usd = usage_hourly.spend_usd + excluded.spend_usd,
             input_tokens = usage_hourly.input_tokens + excluded.input_tokens,
             output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
             cache_read_tokens = usage_hourly.cache_read_tokens + excluded.cache_read_tokens,
             cache_write_tokens = usage_hourly.cache_write_tokens + excluded.cache_write_tokens,
             comparable_requests = usage_hourly.comparable_requests + excluded.comparable_requests,
             comparable_spend_usd = usage_hourly.comparable_spend_usd + excluded.comparable_spend_usd,
             official_cost_usd = usage_hourly.official_cost_usd + excluded.official_cost_usd)
           ${APPENDED_ROWS}`,
  },
);

/**
 * Writes usage events and their ledger debits in short batches (group commit): one PostgreSQL
 * statement (its own transaction) per batch inserts the events (idempotent on their ids), locks the
 * accounts involved, appends one ledger row per account, key and month covering exactly the billed
 * events inserted, and moves the stored balances by exactly the appended rows. The in-memory wallets
 * were already moved when the request finished, so callers never wait for this. A failed batch is retried (every write is idempotent) and flushed at shutdown.
 */
export class UsageRecorder {
  private queue: QueuedRecord[] = [];
  private timer?: NodeJS.Timeout;
  /** The one running drain: it writes batch after batch while there is a full batch or a flush asks for more. */
  private draining: Promise<void> | null = null;
  /** When the running drain stops retrying a failed batch (a shutdown lowers it). */
  private deadline = Number.POSITIVE_INFINITY;
  /** Records ever queued, and how many of them (in order) the flushes asked so far must see written. */
  private queued = 0;
  private flushTarget = 0;
  private written = 0;
  private pool?: pg.Pool;
  private journal?: UsageJournal;

  private get flushMs(): number {
    return this.deps.flushMs ?? DEFAULT_FLUSH_MS;
  }

  constructor(private readonly deps: { orm: MikroORM; log: Logger; metrics?: Metrics; flushMs?: number; committed?: (batch: CommittedBatch) => void }) {}

  record(record: UsageRecord): void {
    this.deps.metrics?.observeUsage(record);
    this.enqueue(recordJson(record), record.userId);
  }

  /**
   * Keeps records on local disk until they are written (src/usage/usage-journal.ts), and first writes those a
   * process that died on this DATA_DIR and database had not. Before it, a SIGKILL lost the records of the batch
   * not yet written: requests answered in the last 100 ms, never billed.
   */
  openJournal(dir: string): number {
    this.journal = UsageJournal.open(dir, this.deps.log);
    return this.journal.recover((json) => this.enqueue(json, (JSON.parse(json) as unknown[])[FIELD_AT.get('userId')!] as string));
  }

  closeJournal(): void {
    if (!this.queue.length) this.journal?.close();
  }

  private enqueue(json: string, userId: string): void {
    this.journal?.append(json);
    this.queue.push({ json, bytes: Buffer.byteLength(json), userId });
    this.queued++;
    // A running drain takes a full batch itself; a partial one waits for the timer set when the drain ends.
    // (Taking every arrival at once made a drain that never ended under a steady trickle: one client's
    // requests back to back each paid a transaction of their own.)
    if (this.draining) return;
    if (this.queue.length >= MAX_BATCH) void this.flush().catch(() => undefined);
    else this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.flushMs);
  }

  get pending(): number {
    return this.queue.length;
  }

  get recorded(): number {
    return this.written;
  }

  /** Writes everything queued so far (retrying failed batches until `deadline`); later arrivals only if a batch fills. */
  async flush(deadline = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.deadline = Math.min(this.deadline, deadline);
    const target = (this.flushTarget = this.queued);
    // A drain that ended just before this call was made may not have seen the target: then another runs.
    while (this.written < target) await (this.draining ??= this.startDrain());
  }

  private startDrain(): Promise<void> {
    const ended = () => {
      this.draining = null;
      this.deadline = Number.POSITIVE_INFINITY;
    };
    return this.drain().then(
      () => {
        ended();
        // What arrived during the drain (less than a batch) waits for a flush of its own.
        if (this.queue.length) this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.flushMs);
      },
      (error: unknown) => {
        // Given up at its deadline (a shutdown): what is left stays queued for the caller to report.
        ended();
        throw error;
      },
    );
  }

  /** Writes while a batch is full or records a flush asked for are not written yet (records leave the queue in order). */
  private async drain(): Promise<void> {
    while (this.queue.length >= MAX_BATCH || this.written < this.flushTarget) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        await this.write(batch);
        this.written += batch.length;
        this.journal?.committed(batch.length);
      } catch (error) {
        this.queue.unshift(...batch);
        this.deps.log.error({ err: error, records: batch.length }, 'could not write usage batch; retrying');
        if (Date.now() + RETRY_MS > this.deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  private async write(batch: QueuedRecord[]): Promise<void> {
    this.pool ??= await (this.deps.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    const client = await this.pool.connect();
    let lost: Error | undefined;
    try {
      const ledger = await USAGE_BATCH.post(client, batchJson(batch), batch.map((queued) => queued.userId));
      if (this.deps.committed) announce(this.deps.committed, batch, ledger, this.deps.log);
    } catch (error) {
      // A statement PostgreSQL refused was its own transaction and left the connection usable; a connection
      // that failed is discarded, not returned to the pool.
      if (!(error instanceof pg.DatabaseError)) lost = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.release(lost);
    }
  }
}

/**
 * What a committed batch changed, for the account events (src/events): each account's records, as the
 * positional JSON they were written from (`usageEventOf` reads one), and the ledger rows the batch appended with
 * their accounts' balances after it.
 */
export interface CommittedBatch {
  records: Map<string, string[]>;
  ledger: AppendedRow[];
}

function announce(committed: (batch: CommittedBatch) => void, batch: readonly QueuedRecord[], ledger: AppendedRow[], log: Logger): void {
  const records = new Map<string, string[]>();
  for (const queued of batch) {
    const own = records.get(queued.userId);
    if (own) own.push(queued.json);
    else records.set(queued.userId, [queued.json]);
  }
  try {
    committed({ records, ledger });
  } catch (error) {
    // The batch is written: a listener's failure must not make it look failed (and be written again).
    log.error({ err: error }, 'could not announce a usage batch');
  }
}

/** Positions of a record's fields in its JSON (`recordJson`). */
const FIELD_AT = new Map<keyof UsageRecord, number>(FIELD_NAMES.map((field, at) => [field, at]));

/** Fields a user never sees (the operator's upstream, credential and cost; the internal ledger link; the owner). */
const OPERATOR_ONLY = new Set<keyof UsageRecord>(['userId', 'upstreamId', 'upstreamCredentialId', 'upstreamCostUsd', 'transactionId']);

/** The key of a record given as its JSON (one element of `CommittedBatch.records`). */
export function keyIdOfRecord(json: string): string | null {
  const values = JSON.parse(json) as unknown[];
  return (values[FIELD_AT.get('apiKeyId')!] as string | null) ?? null;
}

/** A record's positional values (one element of `CommittedBatch.records`, parsed) as its owner sees it. */
export function usageEventOf(values: readonly unknown[]): Omit<UsageRecord, 'userId' | 'upstreamId' | 'upstreamCredentialId' | 'upstreamCostUsd' | 'transactionId'> {
  const view: Record<string, unknown> = {};
  for (const [field, at] of FIELD_AT) {
    if (OPERATOR_ONLY.has(field)) continue;
    const value = values[at] ?? null;
    view[field] = (field === 'createdAt' || field === 'completedAt') && typeof value === 'number' ? new Date(value) : value;
  }
  return view as ReturnType<typeof usageEventOf>;
}
