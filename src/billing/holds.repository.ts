import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids.js';
import { formatUsd } from '../shared/money.js';

/**
 * The holds table: durable holds (video jobs), one per request id. Each function runs on the
 * EntityManager it is given: a fresh one, or the transaction of a settlement, which holds the
 * account's row lock while the hold is closed together with its ledger row. Plain SQL, no entity:
 * every change is one compare-and-set or insert-once statement (`on conflict do nothing`).
 */
export interface HoldView {
  id: string;
  requestId: string;
  userId: string;
  apiKeyId: string | null;
  amountUsd: string;
  status: 'active' | 'settled' | 'released' | 'expired';
  expiresAt: Date;
}

interface HoldRow {
  id: string;
  request_id: string;
  user_id: string;
  api_key_id: string | null;
  amount_usd: string;
  status: HoldView['status'];
  expires_at: Date;
}

export interface NewHold {
  userId: string;
  apiKeyId: string | null;
  requestId: string;
  amountUsd: string;
  ttlMs: number;
}

/** An active durable hold as the wallet caches count it: by its wallet hold id (the request id). */
export interface DurableHold {
  requestId: string;
  apiKeyId: string | null;
  /** The member whose organization key made it (null for a personal key's). */
  memberId: string | null;
  amountUsd: string;
  expiresAt: Date;
}

const HOLD_COLUMNS = 'id, request_id, user_id, api_key_id, amount_usd, status, expires_at';

function toHoldView(row: HoldRow): HoldView {
  return {
    id: row.id,
    requestId: row.request_id,
    userId: row.user_id,
    apiKeyId: row.api_key_id,
    amountUsd: formatUsd(row.amount_usd),
    status: row.status,
    expiresAt: new Date(row.expires_at),
  };
}

/** The hold of a request; with `lock`, its row stays locked until the transaction ends. */
export async function findHold(em: EntityManager, requestId: string, lock = false): Promise<HoldView | null> {
  const [row] = await em.execute<HoldRow[]>(`select ${HOLD_COLUMNS} from holds where request_id = ?${lock ? ' for update' : ''}`, [requestId]);
  return row ? toHoldView(row) : null;
}

/** The hold as written; null when the request already has one (a concurrent hold won the insert). */
export async function insertHold(em: EntityManager, hold: NewHold): Promise<HoldView | null> {
  const [row] = await em.execute<HoldRow[]>(
    `insert into holds (id, user_id, api_key_id, request_id, amount_usd, expires_at)
     values (?, ?, ?, ?, ?, now() + (? * interval '1 millisecond'))
     on conflict (request_id) do nothing
     returning ${HOLD_COLUMNS}`,
    [newId(), hold.userId, hold.apiKeyId, hold.requestId, hold.amountUsd, hold.ttlMs],
  );
  return row ? toHoldView(row) : null;
}

export async function markHoldSettled(tx: EntityManager, id: string): Promise<void> {
  await tx.execute(`update holds set status = 'settled', closed_at = now() where id = ?`, [id]);
}

/** Releases the request's hold if it is active; returns whose it was and its amount, or null. */
export async function releaseHold(em: EntityManager, requestId: string): Promise<{ userId: string; apiKeyId: string | null; amountUsd: string } | null> {
  const [row] = await em.execute<{ user_id: string; api_key_id: string | null; amount_usd: string }[]>(
    `update holds set status = 'released', closed_at = now() where request_id = ? and status = 'active' returning user_id, api_key_id, amount_usd`,
    [requestId],
  );
  return row ? { userId: row.user_id, apiKeyId: row.api_key_id, amountUsd: row.amount_usd } : null;
}

/** Marks active holds past their expiry as expired; returns how many. */
export async function expireHolds(em: EntityManager): Promise<number> {
  const result = await em.execute<{ affectedRows?: number }>(`update holds set status = 'expired', closed_at = now() where status = 'active' and expires_at <= now()`, [], 'run');
  return Number(result.affectedRows ?? 0);
}

/** The account's active, unexpired durable holds. */
export async function durableHoldsOf(em: EntityManager, userId: string): Promise<DurableHold[]> {
  const rows = await em.execute<{ request_id: string; api_key_id: string | null; created_by: string | null; amount_usd: string; expires_at: Date }[]>(
    `select h.request_id, h.api_key_id, k.created_by, h.amount_usd, h.expires_at from holds h left join api_keys k on k.id = h.api_key_id
      where h.user_id = ? and h.status = 'active' and h.expires_at > now()`,
    [userId],
  );
  return rows.map((row) => ({ requestId: row.request_id, apiKeyId: row.api_key_id, memberId: row.created_by, amountUsd: row.amount_usd, expiresAt: new Date(row.expires_at) }));
}
