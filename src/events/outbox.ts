import { randomUUID } from 'node:crypto';
import { webhookEnvelope, type WebhookEvent, type WebhookEventType } from './webhook-types.js';

/**
 * The transaction an event is written in: a MikroORM EntityManager inside `transactional` (its `execute`
 * takes `?` placeholders), or a node-postgres client inside `begin` (its `query` takes `$n`).
 */
export type OutboxTransaction =
  | { execute(sql: string, params: unknown[]): Promise<unknown> }
  | { query(sql: string, params: unknown[]): Promise<unknown> };

/** The Standard Webhooks `webhook-id` of a message: the same on every attempt and replay, so receivers de-duplicate. */
export const newMessageId = (): string => `msg_${randomUUID().replaceAll('-', '')}`;

/**
 * Writes an account event for its webhooks in the CALLER's transaction: the message and one delivery per
 * enabled endpoint of the account subscribed to its type, in one statement. The delivery row is the
 * queue's job (src/events/webhooks/webhook-worker.ts claims it), so the event commits or rolls back with
 * the change that caused it and a crash loses none. An account without such endpoints writes nothing.
 */
export async function enqueueWebhookEvent<T extends WebhookEventType>(tx: OutboxTransaction, event: WebhookEvent<T>, at = new Date()): Promise<void> {
  const payload = JSON.stringify(webhookEnvelope(event.type, event.data, at));
  await run(
    tx,
    `with msg as (
       insert into webhook_messages (id, user_id, event_type, payload, created_at)
       select ?, ?, ?, ?::jsonb, ?
        where exists (select 1 from webhook_endpoints where user_id = ? and enabled and ? = any(event_types))
       returning id, user_id)
     insert into webhook_deliveries (id, endpoint_id, message_id, user_id, next_attempt_at)
     select gen_random_uuid(), e.id, msg.id, msg.user_id, now()
       from msg join webhook_endpoints e on e.user_id = msg.user_id and e.enabled and ? = any(e.event_types)`,
    [newMessageId(), event.userId, event.type, payload, at, event.userId, event.type, event.type],
  );
}

async function run(tx: OutboxTransaction, sql: string, params: unknown[]): Promise<void> {
  if ('execute' in tx) {
    await tx.execute(sql, params);
  } else {
    let n = 0;
    await tx.query(sql.replace(/\?/g, () => `$${++n}`), params);
  }
}
