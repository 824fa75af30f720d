import type { EntityManager } from '@mikro-orm/postgresql';
import type { PoolClient } from 'pg';
import { formatUsd } from '../shared/money.js';

/**
 * The only writer of money. Every row of the append-only `transactions` table, and every move of an
 * account's stored paid and bonus balances, goes through the one statement built here: posted one at
 * a time (top-ups, adjustments, settlements, bonus grants and expiries, inside the caller's
 * transaction) or as a batch of usage debits (the usage recorder's group commit). So the rule for
 * splitting an amount between the paid and the bonus balance exists once, in `SPLIT` below.
 */

/** One ledger row to append. `amountUsd` is signed: below zero spends, above zero credits. */
export interface Posting {
  userId: string;
  amountUsd: string;
  kind: string;
  /** Unique per posting; a second posting with the same key appends nothing (a replay). */
  idempotencyKey: string;
  /** Which balance a credit goes to (paid unless said); debits always spend bonus first. */
  bucket?: 'paid' | 'bonus';
  apiKeyId?: string | null;
  provider?: string | null;
  model?: string | null;
  promptTokens?: number | null;
  completionTokens?: number | null;
  note?: string | null;
}

export interface Posted {
  transactionId: string;
  amountUsd: string;
  /** False when the key had been posted before (a replay): nothing changed. */
  applied: boolean;
  /** The row as appended, with the account's balances after it (absent for a replay). */
  appended?: AppendedRow;
}

/**
 * The columns a posting source must yield, in this order, one row per posting; `n` orders the
 * postings of one batch (an account's debits take its bonus in that order). `id` is the row's id when
 * the source has already named it (other rows of the batch refer to it), else null for a new one.
 */
const POSTING_COLUMNS =
  'id uuid, user_id uuid, amount_usd numeric, bucket text, kind text, idempotency_key text, api_key_id uuid, provider text, model text, ' +
  'prompt_tokens int4, completion_tokens int4, note text, created_at timestamptz';

/**
 * The split rule. A credit goes wholly to its bucket. A debit spends bonus first (bonus expires; paid
 * balance may go below zero on a credit line): it takes what bonus the account has left after the
 * debits posted before it in the same batch (`spent_before`), never more than its own amount, never
 * below zero. `bonus_usd` carries the sign of the amount.
 */
const SPLIT = `case when p.amount_usd >= 0 then (case when p.bucket = 'bonus' then p.amount_usd else 0 end)
                    else -greatest(0, least(-p.amount_usd, greatest(u.balance_bonus_usd, 0) - p.spent_before)) end`;

/**
 * How a statement inserts rows whose key is unique (an idempotency key, an event id). A batch's first
 * attempt inserts them plainly: looking each key up before inserting it (`on conflict`) was 14 % of
 * PostgreSQL's CPU per usage batch, and a replayed key is rare (a batch whose commit was not seen). A
 * key that exists then fails the statement whole (unique violation, nothing written), and the replay
 * skips the rows that exist. A single posting (postOne) always skips them.
 */
export type OnConflict = (target: string) => string;
const FIRST_ATTEMPT: OnConflict = () => '';
const REPLAY: OnConflict = (target) => `on conflict (${target}) do nothing`;
const UNIQUE_VIOLATION = '23505';

/**
 * A UUIDv7 (RFC 9562) for a ledger row, as SQL: a random UUID whose first 48 bits are the time in milliseconds
 * and whose version is 7. A B-tree on a random key takes each insert on a random leaf (the whole index written to
 * and kept in cache); time-ordered keys land on its rightmost leaves.
 */
export const UUID_V7 = `encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                   placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::int8) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid`;

/**
 * The postings of `source` (a query yielding POSTING_COLUMNS and `n`) as WITH items: `appended` yields
 * the appended rows (id, user_id, paid_usd, bonus_usd, idempotency_key) and `moved` moves each
 * account's balances by exactly those rows (a replayed key appends nothing and moves nothing). The
 * split reads the accounts' balances from `accounts`: `users` when the caller's transaction holds
 * their row locks already (postOne), or a WITH item that locks them and yields their current rows (a
 * batch, see PostingBatch).
 */
function appendItems(source: string, accounts = 'users', onConflict: OnConflict = REPLAY): string {
  return `postings as (${source}),
           ordered as (
             select p.*, sum(greatest(-p.amount_usd, 0)) over (partition by p.user_id order by p.n) - greatest(-p.amount_usd, 0) as spent_before
               from postings p),
           split as (
             select p.*, ${SPLIT} as bonus_usd from ordered p join ${accounts} u on u.id = p.user_id),
           appended as (
             insert into transactions (id, user_id, amount_usd, paid_usd, bonus_usd, kind, api_key_id, provider, model,
                                       prompt_tokens, completion_tokens, idempotency_key, note, created_at)
             select coalesce(id, ${UUID_V7}), user_id, amount_usd, amount_usd - bonus_usd, bonus_usd, kind, api_key_id, provider, model,
                    prompt_tokens, completion_tokens, idempotency_key, note, coalesce(created_at, now())
               from split order by n
             ${onConflict('idempotency_key')}
             returning id, user_id, amount_usd, paid_usd, bonus_usd, kind, api_key_id, created_at, idempotency_key),
           moved as (
             update users u set balance_paid_usd = u.balance_paid_usd + m.paid, balance_bonus_usd = u.balance_bonus_usd + m.bonus, updated_at = now()
               from (select user_id, sum(paid_usd) as paid, sum(bonus_usd) as bonus from appended group by user_id) m
              where u.id = m.user_id
             returning u.id, u.balance_paid_usd, u.balance_bonus_usd)`;
}

/**
 * A final statement that returns the appended rows (`AppendedRow`) with their accounts' balances after the
 * statement (what balance events announce, src/billing/balance-events.ts).
 */
export const APPENDED_ROWS = `select a.id, a.user_id, a.amount_usd::text, a.paid_usd::text, a.bonus_usd::text, a.kind, a.api_key_id, a.created_at,
         m.balance_paid_usd::text as balance_paid_usd, m.balance_bonus_usd::text as balance_bonus_usd
    from appended a join moved m on m.id = a.user_id order by a.created_at, a.id`;

/** A ledger row as a posting statement appended it, and its account's balances once the statement was done. */
export interface AppendedRow {
  id: string;
  user_id: string;
  amount_usd: string;
  paid_usd: string;
  bonus_usd: string;
  kind: string;
  api_key_id: string | null;
  created_at: Date;
  balance_paid_usd: string;
  balance_bonus_usd: string;
}

/** Postings given as one JSON array (`$1` for the driver, `?` for MikroORM), in array order. */
const jsonPostings = (placeholder: string) =>
  `select * from rows from (json_to_recordset(${placeholder}::json) as (${POSTING_COLUMNS}))
     with ordinality as p(${POSTING_COLUMNS.split(', ').map((column) => column.split(' ')[0]).join(', ')}, n)`;

const POST_ONE = `with ${appendItems(jsonPostings('?'))} ${APPENDED_ROWS}`;

/** A posting as one element of the JSON array `jsonPostings` reads. */
function postingRow(posting: Posting) {
  return {
    id: null,
    user_id: posting.userId,
    amount_usd: posting.amountUsd,
    bucket: posting.bucket ?? 'paid',
    kind: posting.kind,
    idempotency_key: posting.idempotencyKey,
    api_key_id: posting.apiKeyId ?? null,
    provider: posting.provider ?? null,
    model: posting.model ?? null,
    prompt_tokens: posting.promptTokens ?? null,
    completion_tokens: posting.completionTokens ?? null,
    note: posting.note ?? null,
    created_at: null,
  };
}

/**
 * Posts one row inside `tx`, a transaction that already holds the account's row lock (so concurrent
 * postings to one account serialise and each sees the balance the previous one left).
 */
export async function postOne(tx: EntityManager, posting: Posting): Promise<Posted> {
  const [appended] = await tx.execute<AppendedRow[]>(POST_ONE, [JSON.stringify([postingRow(posting)])]);
  if (appended) return { transactionId: appended.id, amountUsd: formatUsd(posting.amountUsd), applied: true, appended };
  const [existing] = await tx.execute<{ id: string; amount_usd: string }[]>('select id, amount_usd from transactions where idempotency_key = ?', [
    posting.idempotencyKey,
  ]);
  return { transactionId: existing!.id, amountUsd: formatUsd(existing!.amount_usd), applied: false };
}

/**
 * A batch of postings that another statement's rows describe (the usage recorder's records), as one
 * named prepared statement that is its own transaction: one round trip, where a transaction of its own
 * took four (begin, lock, append, commit; in a 1-record batch PostgreSQL spent 720 us of CPU on them,
 * 280 us of it outside the append). Its text never changes with the batch size, so it is parsed and
 * planned once per connection.
 *
 * The accounts are locked first, in id order (so two batches never deadlock), by the `locked` WITH item,
 * which yields each account's current row: in a statement whose snapshot is older than another
 * transaction's commit, a row locked FOR UPDATE is the latest version, which is what the split must read.
 * No ledger write runs before every lock is held: `postings` waits for a count of all of `locked` (an
 * initplan, evaluated before its first row), and the ledger's writes read `postings` (through `split`).
 * The caller's own writes (`statement`) move no balance and need no lock. Replays stay exact under
 * concurrency: a unique key sees rows committed after the snapshot (the first attempt fails on them,
 * the replay skips them; see OnConflict), and the balance update re-reads the row it moves.
 */
export class PostingBatch {
  private readonly first: { name: string; text: string };
  private readonly replay: { name: string; text: string };

  /**
   * `source`: a query over the statement's parameters (`$1`; the accounts to lock are `$2`) yielding
   * POSTING_COLUMNS and an order `n`. `statement` (optional) writes the rest of a batch in the same
   * statement, so its parameters are read once: `items` are WITH items before the ledger's (which
   * `source` may read), `then` follows them (more WITH items, each starting with a comma, then the final
   * statement); their unique inserts take `onConflict`. Without it the statement returns the appended
   * rows (APPENDED_ROWS).
   */
  constructor(name: string, source: string, statement?: { items: (onConflict: OnConflict) => string; then: (onConflict: OnConflict) => string }) {
    const locked = `locked as materialized (
             select id, balance_bonus_usd from users where id = any($2::uuid[]) order by id for update)`;
    const gated = `select s.* from (${source}) s where (select count(*) from locked) >= 0`;
    const text = (onConflict: OnConflict) =>
      `with ${locked}, ${statement ? `${statement.items(onConflict)}, ` : ''}${appendItems(gated, 'locked', onConflict)}
       ${statement ? statement.then(onConflict) : APPENDED_ROWS}`;
    this.first = { name, text: text(FIRST_ATTEMPT) };
    this.replay = { name: `${name}_replay`, text: text(REPLAY) };
  }

  /**
   * Posts the batch whose rows `rows` (`$1`) describes; `accounts` include every account they post to (others
   * are only locked). On a checked-out connection: both attempts of a replay run on it, where `pool.query`
   * would discard a connection after the first attempt's unique violation.
   */
  async post(client: PoolClient, rows: string | Buffer, accounts: Iterable<string>): Promise<AppendedRow[]> {
    const values = [rows, [...new Set(accounts)]];
    try {
      return (await client.query<AppendedRow>({ ...this.first, values })).rows;
    } catch (error) {
      // A key the batch holds exists (a replayed batch, or the same key posted at the same time): nothing was written.
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      return (await client.query<AppendedRow>({ ...this.replay, values })).rows;
    }
  }
}

const DEBITS = new PostingBatch('ledger_debits', jsonPostings('$1'));

/**
 * Posts a batch of debits in one transaction (locks, appends and balance moves in order; replayed keys
 * append nothing). Debits only: within a batch, a debit's bonus share counts the debits before it, not
 * credits, so a credit is posted on its own (`postOne`).
 */
export async function postDebits(client: PoolClient, postings: Posting[]): Promise<AppendedRow[]> {
  if (postings.some((posting) => !posting.amountUsd.startsWith('-'))) throw new Error('postDebits: a batch holds debits only');
  return DEBITS.post(client, JSON.stringify(postings.map(postingRow)), postings.map((posting) => posting.userId));
}
