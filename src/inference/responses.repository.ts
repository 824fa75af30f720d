import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/** An item of a Responses conversation (input or output), kept as the client sent or received it. */
export type ResponsesItem = Record<string, unknown> & { type?: string; id?: string };

export interface NewStoredResponse {
  id: string;
  userId: string;
  apiKeyId: string | null;
  model: string;
  previousResponseId: string | null;
  createdAt: Date;
  expiresAt: Date;
  response: Record<string, unknown>;
  /** In order: the response's input items, then its output items. */
  items: { side: 'input' | 'output'; itemId: string | null; item: ResponsesItem }[];
}

/**
 * The responses and response_items tables. Plain SQL, no entity: every read is set-based (a recursive
 * chain, a page, the newest item per id) and writes are an insert-once and batched deletes that skip
 * locked rows. Every read takes the moment that decides what has expired (`at`).
 */
export class ResponsesRepository {
  constructor(private readonly orm: MikroORM) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /** Writes a response and its items in one transaction; nothing when one with this id exists. */
  async insert(response: NewStoredResponse): Promise<void> {
    // Each item travels as its own JSON text: PostgreSQL's JSON functions refuse a `\u0000` escape
    // inside a value they unpack, but the `json` column takes the text as it is.
    const rows = response.items.map((row, position) => ({ position, side: row.side, item_id: row.itemId, item: JSON.stringify(row.item) }));
    await this.em().transactional(async (tx: EntityManager) => {
      const inserted = await tx.execute<{ id: string }[]>(
        `insert into responses (id, user_id, api_key_id, model, previous_response_id, created_at, expires_at, response)
         values (?, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?::json)
         on conflict (id) do nothing returning id`,
        [
          response.id,
          response.userId,
          response.apiKeyId,
          response.model,
          response.previousResponseId,
          response.createdAt.toISOString(),
          response.expiresAt.toISOString(),
          JSON.stringify(response.response),
        ],
      );
      // Already stored (a retried save): its items are already there too, written in the same transaction.
      if (!inserted.length || !rows.length) return;
      // Every item in one statement, however many there are.
      await tx.execute(
        `insert into response_items (response_id, user_id, position, side, item_id, item)
         select ?, ?::uuid, x.position, x.side, x.item_id, x.item::json
           from json_to_recordset(?::json) as x(position integer, side text, item_id text, item text)`,
        [response.id, response.userId, JSON.stringify(rows)],
      );
    });
  }

  /** The stored response object, if visible to this account at `at`. */
  async response(userId: string, id: string, at: string): Promise<Record<string, unknown> | null> {
    const [row] = await this.em().execute<{ response: Record<string, unknown> }[]>('select response from responses where id = ? and user_id = ? and expires_at > ?::timestamptz', [
      id,
      userId,
      at,
    ]);
    return row?.response ?? null;
  }

  /**
   * The items of `id`'s chain of previous responses (at most `maxDepth` links back), oldest response
   * first, each response's items in order; a response without items yields one null. Empty when `id`
   * is not visible.
   */
  async chainItems(userId: string, id: string, at: string, maxDepth: number): Promise<(ResponsesItem | null)[]> {
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
      [id, userId, at, userId, at, maxDepth],
    );
    return rows.map((row) => row.item);
  }

  /** The newest visible item of each of these ids. */
  async itemsById(userId: string, ids: string[], at: string): Promise<{ itemId: string; item: ResponsesItem }[]> {
    const rows = await this.em().execute<{ item_id: string; item: ResponsesItem }[]>(
      `select distinct on (i.item_id) i.item_id, i.item
         from response_items i join responses r on r.id = i.response_id
        where i.user_id = ? and i.item_id in (select jsonb_array_elements_text(?::jsonb))
          and r.user_id = ? and r.expires_at > ?::timestamptz
        order by i.item_id, r.seq desc, i.position desc`,
      [userId, JSON.stringify(ids), userId, at],
    );
    return rows.map((row) => ({ itemId: row.item_id, item: row.item }));
  }

  /** Whether the response is visible to this account at `at`. */
  async visible(userId: string, id: string, at: string): Promise<boolean> {
    const rows = await this.em().execute<{ id: string }[]>('select id from responses where id = ? and user_id = ? and expires_at > ?::timestamptz', [id, userId, at]);
    return rows.length > 0;
  }

  /** The position of the first input item of the response with this item id; null when none has it. */
  async inputPosition(responseId: string, itemId: string): Promise<number | null> {
    const [row] = await this.em().execute<{ position: number | null }[]>(
      `select min(position) as position from response_items where response_id = ? and side = 'input' and item_id = ?`,
      [responseId, itemId],
    );
    return row?.position ?? null;
  }

  /** Up to `limit` input items of the response in `order`, those past position `after` (all when null). */
  async inputItems(responseId: string, after: number | null, order: 'asc' | 'desc', limit: number): Promise<ResponsesItem[]> {
    const direction = order === 'asc' ? 'asc' : 'desc';
    const comparison = order === 'asc' ? '>' : '<';
    const rows = await this.em().execute<{ item: ResponsesItem }[]>(
      `select item from response_items
        where response_id = ? and side = 'input' ${after === null ? '' : `and position ${comparison} ?`}
        order by position ${direction} limit ?`,
      after === null ? [responseId, limit] : [responseId, after, limit],
    );
    return rows.map((row) => row.item);
  }

  /** Deletes a response visible to this account (its items go with it); false when there was none. */
  async delete(userId: string, id: string, at: string): Promise<boolean> {
    const deleted = await this.em().execute<{ id: string }[]>('delete from responses where id = ? and user_id = ? and expires_at > ?::timestamptz returning id', [id, userId, at]);
    return deleted.length > 0;
  }

  /** Deletes up to `limit` responses expired at `at`, skipping rows another process is deleting; returns how many. */
  async purgeExpired(at: string, limit: number): Promise<number> {
    const deleted = await this.em().execute<{ id: string }[]>(
      `delete from responses where id in (
         select id from responses where expires_at <= ?::timestamptz limit ? for update skip locked
       ) returning id`,
      [at, limit],
    );
    return deleted.length;
  }
}
