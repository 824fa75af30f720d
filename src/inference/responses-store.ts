import { randomBytes } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';

/**
 * Stored Responses: the state OpenAI keeps for `/v1/responses` (`store: true`, `previous_response_id`,
 * `item_reference`, GET/DELETE /v1/responses/{id}, input_items), kept in PostgreSQL so every worker
 * process and every restart sees it. A response belongs to the account (user id) that made it: any
 * other account gets the same answer as for an unknown id. It is invisible once `expires_at` has
 * passed (compared with the injected clock) and purged later in batches. No money is held here.
 */

export type ResponsesItem = Record<string, unknown> & { type?: string; id?: string };

export interface StoreResponseInput {
  id: string;
  userId: string;
  apiKeyId: string | null;
  model: string;
  previousResponseId: string | null;
  input: ResponsesItem[];
  output: ResponsesItem[];
  response: Record<string, unknown>;
}

export interface InputItemsOptions {
  limit?: number;
  order?: 'asc' | 'desc';
  after?: string;
}

export interface InputItemsPage {
  object: 'list';
  data: ResponsesItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** A previous_response_id chain longer than this is cut (it can only be a cycle written by a bug). */
const MAX_CHAIN = 10_000;
/** Rows deleted per purge statement, so one purge never holds many locks or one long transaction. */
const PURGE_BATCH = 500;

/** OpenAI-like prefixes for the ids given to input items that arrive without one. */
const ID_PREFIX: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
};

export function newItemId(type: string | undefined): string {
  return `${ID_PREFIX[type ?? 'message'] ?? 'item'}_${randomBytes(24).toString('hex')}`;
}

export class ResponsesStore {
  constructor(private readonly deps: { orm: MikroORM; config: Config; clock: Clock; log: Logger }) {}

  private em(): EntityManager {
    return this.deps.orm.em.fork();
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Writes one response and its items in one transaction. Idempotent on id: a second save changes nothing. */
  async save(input: StoreResponseInput): Promise<void> {
    const now = this.deps.clock.now();
    const expiresAt = new Date(now.getTime() + this.deps.config.responses.ttlMs);
    const rows = [
      ...input.input.map((item) => ({ side: 'input', item: withInputId(item) })),
      // Output items are stored exactly as the client received them, ids included.
      ...input.output.map((item) => ({ side: 'output', item })),
      // Each item travels as its own JSON text: PostgreSQL's JSON functions refuse a `\u0000` escape
      // inside a value they unpack, but the `json` column takes the text as it is.
    ].map((row, position) => ({ position, side: row.side, item_id: lookupId(row.item.id), item: JSON.stringify(row.item) }));

    await this.em().transactional(async (tx: EntityManager) => {
      const inserted = await tx.execute<{ id: string }[]>(
        `insert into responses (id, user_id, api_key_id, model, previous_response_id, created_at, expires_at, response)
         values (?, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?::json)
         on conflict (id) do nothing returning id`,
        [input.id, input.userId, input.apiKeyId, input.model, lookupId(input.previousResponseId), now.toISOString(), expiresAt.toISOString(), JSON.stringify(input.response)],
      );
      // Already stored (a retried save): its items are already there too, written in the same transaction.
      if (!inserted.length || !rows.length) return;
      // Every item in one statement, however many there are.
      await tx.execute(
        `insert into response_items (response_id, user_id, position, side, item_id, item)
         select ?, ?::uuid, x.position, x.side, x.item_id, x.item::json
           from json_to_recordset(?::json) as x(position integer, side text, item_id text, item text)`,
        [input.id, input.userId, JSON.stringify(rows)],
      );
    });
  }

  /** The stored response object; null if unknown, expired or another account's. */
  async get(userId: string, id: string): Promise<Record<string, unknown> | null> {
    if (!lookupId(id)) return null;
    const [row] = await this.em().execute<{ response: Record<string, unknown> }[]>(
      'select response from responses where id = ? and user_id = ? and expires_at > ?::timestamptz',
      [id, userId, this.now()],
    );
    return row?.response ?? null;
  }

  /**
   * The conversation `responseId` continues, oldest response first, each response's input items then its
   * output items. The walk stops at a link that is gone (expired, deleted, another account's): what is
   * left of the conversation is still a valid one. null if `responseId` itself is not visible.
   */
  async context(userId: string, responseId: string): Promise<ResponsesItem[] | null> {
    if (!lookupId(responseId)) return null;
    const now = this.now();
    const rows = await this.em().execute<{ item: ResponsesItem | null }[]>(
      `with recursive chain (id, previous_response_id, depth) as (
         select id, previous_response_id, 0 from responses
          where id = ? and user_id = ? and expires_at > ?::timestamptz
         union all
         select r.id, r.previous_response_id, c.depth + 1 from chain c
           join responses r on r.id = c.previous_response_id and r.user_id = ? and r.expires_at > ?::timestamptz
          where c.depth < ?
       )
       select i.item from chain c left join response_items i on i.response_id = c.id
        order by c.depth desc, i.position asc`,
      [responseId, userId, now, userId, now, MAX_CHAIN],
    );
    if (!rows.length) return null;
    // A response with no items still yields one row (the left join), with a null item.
    return rows.flatMap((row) => (row.item ? [row.item] : []));
  }

  /** `item_reference` resolution: the stored items with these ids for this account, the newest of each. */
  async items(userId: string, ids: string[]): Promise<Map<string, ResponsesItem>> {
    const found = new Map<string, ResponsesItem>();
    const wanted = [...new Set(ids.map(lookupId).filter((id) => id !== null))];
    if (!wanted.length) return found;
    const rows = await this.em().execute<{ item_id: string; item: ResponsesItem }[]>(
      `select distinct on (i.item_id) i.item_id, i.item
         from response_items i join responses r on r.id = i.response_id
        where i.user_id = ? and i.item_id in (select jsonb_array_elements_text(?::jsonb))
          and r.user_id = ? and r.expires_at > ?::timestamptz
        order by i.item_id, r.seq desc, i.position desc`,
      [userId, JSON.stringify(wanted), userId, this.now()],
    );
    for (const row of rows) found.set(row.item_id, row.item);
    return found;
  }

  /**
   * The input items of one response in OpenAI's list shape. `after` is the id of an item of this list:
   * the page starts just past it (in the requested order). An `after` that is not one of them is a 422.
   * null if the response is not visible.
   */
  async inputItems(userId: string, id: string, options: InputItemsOptions): Promise<InputItemsPage | null> {
    const limit = options.limit ?? 20;
    const order = options.order ?? 'desc';
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw validation(['limit'], 'Input should be between 1 and 100', 'value_error');
    }
    if (!lookupId(id)) return null;
    const em = this.em();
    const [head] = await em.execute<{ id: string }[]>('select id from responses where id = ? and user_id = ? and expires_at > ?::timestamptz', [id, userId, this.now()]);
    if (!head) return null;
    let cursor: number | null = null;
    if (options.after !== undefined) {
      if (!lookupId(options.after)) throw validation(['after'], 'No input item of this response has this id', 'value_error');
      const [row] = await em.execute<{ position: number }[]>(
        `select min(position) as position from response_items where response_id = ? and side = 'input' and item_id = ?`,
        [id, options.after],
      );
      if (row?.position === null || row?.position === undefined) throw validation(['after'], 'No input item of this response has this id', 'value_error');
      cursor = row.position;
    }
    const direction = order === 'asc' ? 'asc' : 'desc';
    const comparison = order === 'asc' ? '>' : '<';
    // One row more than asked tells whether there is a next page.
    const rows = await em.execute<{ item: ResponsesItem }[]>(
      `select item from response_items
        where response_id = ? and side = 'input' ${cursor === null ? '' : `and position ${comparison} ?`}
        order by position ${direction} limit ?`,
      cursor === null ? [id, limit + 1] : [id, cursor, limit + 1],
    );
    const data = rows.slice(0, limit).map((row) => row.item);
    return {
      object: 'list',
      data,
      first_id: idOf(data[0]),
      last_id: idOf(data.at(-1)),
      has_more: rows.length > limit,
    };
  }

  /** Deletes one response and its items; false if unknown, expired or another account's. */
  async delete(userId: string, id: string): Promise<boolean> {
    if (!lookupId(id)) return false;
    const deleted = await this.em().execute<{ id: string }[]>(
      'delete from responses where id = ? and user_id = ? and expires_at > ?::timestamptz returning id',
      [id, userId, this.now()],
    );
    return deleted.length > 0;
  }

  /**
   * Deletes expired responses (their items go with them) in batches of PURGE_BATCH, each its own short
   * statement; rows another process is purging at the same moment are skipped, not waited for.
   */
  async purgeExpired(): Promise<number> {
    const now = this.now();
    let total = 0;
    for (;;) {
      const deleted = await this.em().execute<{ id: string }[]>(
        `delete from responses where id in (
           select id from responses where expires_at <= ?::timestamptz limit ? for update skip locked
         ) returning id`,
        [now, PURGE_BATCH],
      );
      total += deleted.length;
      if (deleted.length < PURGE_BATCH) break;
    }
    if (total) this.deps.log.info({ purged: total }, 'expired stored responses purged');
    return total;
  }
}

/**
 * An input item as stored: with an id (OpenAI lists every input item with one) and, for the short
 * message form `{role, content}`, with its `type`. The caller's object is not changed.
 */
function withInputId(item: ResponsesItem): ResponsesItem {
  const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
  if (typeof item.id === 'string' && item.id && item.type === type) return item;
  return { ...item, ...(type ? { type } : {}), id: typeof item.id === 'string' && item.id ? item.id : newItemId(type) };
}

/**
 * An id as PostgreSQL text can hold and compare it: a NUL or a lone surrogate (possible in what a client
 * sends) cannot be stored or looked up, so such an id is never found instead of failing the query.
 */
// A NUL, a high surrogate not followed by a low one, or a low surrogate without a high one before it.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function lookupId(id: unknown): string | null {
  return typeof id === 'string' && id.length > 0 && id.length <= 1_024 && !UNSTORABLE.test(id) ? id : null;
}

function idOf(item: ResponsesItem | undefined): string | null {
  return typeof item?.id === 'string' ? item.id : null;
}

function validation(loc: string[], msg: string, type: string): DomainError {
  return new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc, msg, type }] });
}
