import { randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import { ResponsesRepository, type ResponsesItem } from './responses.repository.js';

export type { ResponsesItem } from './responses.repository.js';

/**
 * Stored Responses: the state OpenAI keeps for `/v1/responses` (`store: true`, `previous_response_id`,
 * `item_reference`, GET/DELETE /v1/responses/{id}, input_items), kept in PostgreSQL so every worker
 * process and every restart sees it. A response belongs to the account (user id) that made it: any
 * other account gets the same answer as for an unknown id. It is invisible once `expires_at` has
 * passed (compared with the injected clock) and purged later in batches. No money is held here.
 */

export interface ResponsesSettings {
  /** How long a stored response is kept after it is written. */
  ttlMs: number;
}

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
  private readonly responses: ResponsesRepository;

  constructor(private readonly deps: { orm: MikroORM; settings: ResponsesSettings; clock: Clock; log: Logger }) {
    this.responses = new ResponsesRepository(deps.orm);
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Writes one response and its items in one transaction. Idempotent on id: a second save changes nothing. */
  async save(input: StoreResponseInput): Promise<void> {
    const now = this.deps.clock.now();
    const items = [
      ...input.input.map((item) => ({ side: 'input' as const, item: withInputId(item) })),
      // Output items are stored exactly as the client received them, ids included.
      ...input.output.map((item) => ({ side: 'output' as const, item })),
    ].map((row) => ({ ...row, itemId: lookupId(row.item.id) }));
    await this.responses.insert({
      id: input.id,
      userId: input.userId,
      apiKeyId: input.apiKeyId,
      model: input.model,
      previousResponseId: lookupId(input.previousResponseId),
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.deps.settings.ttlMs),
      response: input.response,
      items,
    });
  }

  /** The stored response object; null if unknown, expired or another account's. */
  async get(userId: string, id: string): Promise<Record<string, unknown> | null> {
    if (!lookupId(id)) return null;
    return this.responses.response(userId, id, this.now());
  }

  /**
   * The conversation `responseId` continues, oldest response first, each response's input items then its
   * output items. The walk stops at a link that is gone (expired, deleted, another account's): what is
   * left of the conversation is still a valid one. null if `responseId` itself is not visible.
   */
  async context(userId: string, responseId: string): Promise<ResponsesItem[] | null> {
    if (!lookupId(responseId)) return null;
    const items = await this.responses.chainItems(userId, responseId, this.now(), MAX_CHAIN);
    if (!items.length) return null;
    // A response with no items still yields one null.
    return items.flatMap((item) => (item ? [item] : []));
  }

  /** `item_reference` resolution: the stored items with these ids for this account, the newest of each. */
  async items(userId: string, ids: string[]): Promise<Map<string, ResponsesItem>> {
    const found = new Map<string, ResponsesItem>();
    const wanted = [...new Set(ids.map(lookupId).filter((id) => id !== null))];
    if (!wanted.length) return found;
    for (const { itemId, item } of await this.responses.itemsById(userId, wanted, this.now())) found.set(itemId, item);
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
    if (!(await this.responses.visible(userId, id, this.now()))) return null;
    let cursor: number | null = null;
    if (options.after !== undefined) {
      const position = lookupId(options.after) === null ? null : await this.responses.inputPosition(id, options.after);
      if (position === null) throw validation(['after'], 'No input item of this response has this id', 'value_error');
      cursor = position;
    }
    // One row more than asked tells whether there is a next page.
    const rows = await this.responses.inputItems(id, cursor, order, limit + 1);
    const data = rows.slice(0, limit);
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
    return this.responses.delete(userId, id, this.now());
  }

  /**
   * Deletes expired responses (their items go with them) in batches of PURGE_BATCH, each its own short
   * statement; rows another process is purging at the same moment are skipped, not waited for.
   */
  async purgeExpired(): Promise<number> {
    const now = this.now();
    let total = 0;
    for (;;) {
      const deleted = await this.responses.purgeExpired(now, PURGE_BATCH);
      total += deleted;
      if (deleted < PURGE_BATCH) break;
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
