import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../../shared/ids.js';
import { newMessageId } from '../outbox.js';
import { webhookEnvelope, type WebhookEventType } from '../webhook-types.js';

/** The webhook tables as PostgreSQL returns them; only this module reads them. */
export interface EndpointRow {
  id: string;
  user_id: string;
  url: string;
  description: string | null;
  event_types: string[];
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
  language: 'ru' | 'en';
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRecord {
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  message_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  last_response_body: string | null;
  attempt_log: AttemptRecord[];
  delivered_at: Date | null;
  created_at: Date;
}

/** A delivery the worker holds: where it goes, how it is signed, what it says. */
export interface ClaimedDelivery {
  id: string;
  message_id: string;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  payload: unknown;
}

export interface NewEndpoint {
  url: string;
  description: string | null;
  eventTypes: WebhookEventType[];
  secret: string;
  language: 'ru' | 'en';
}

export interface AttemptOutcome extends AttemptRecord {
  responseBody: string | null;
}

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.message_id, m.event_type, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at, d.last_status_code,
  d.last_error, d.last_duration_ms, d.last_response_body, d.attempt_log, d.delivered_at, d.created_at`;
/** Attempts kept in a delivery's log (the schedule has 8; replays make new deliveries). */
const LOG_LENGTH = 20;

export class WebhooksRepository {
  constructor(private readonly orm: MikroORM) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  endpoints(userId: string): Promise<EndpointRow[]> {
    return this.em().execute('select * from webhook_endpoints where user_id = ? order by created_at, id', [userId]);
  }

  async endpoint(userId: string, id: string): Promise<EndpointRow | undefined> {
    const [row] = await this.em().execute<EndpointRow[]>('select * from webhook_endpoints where id = ? and user_id = ?', [id, userId]);
    return row;
  }

  /** Inserts an endpoint unless the account has `max` already (null then); counted under the account's row lock. */
  insertWithin(userId: string, e: NewEndpoint, max: number): Promise<EndpointRow | null> {
    return this.em().transactional(async (tx) => {
      await tx.execute('select 1 from users where id = ? for update', [userId]);
      const [{ n }] = (await tx.execute<{ n: string }[]>('select count(*) as n from webhook_endpoints where user_id = ?', [userId])) as [{ n: string }];
      if (Number(n) >= max) return null;
      const [row] = await tx.execute<EndpointRow[]>(
        'insert into webhook_endpoints (id, user_id, url, description, event_types, secret, language) values (?, ?, ?, ?, ?::text[], ?, ?) returning *',
        [newId(), userId, e.url, e.description, `{${e.eventTypes.join(',')}}`, e.secret, e.language],
      );
      return row!;
    });
  }

  /** Changes what is given; enabling clears the disabled reason and the failure streak. */
  async update(userId: string, id: string, changes: { url?: string; description?: string | null; eventTypes?: WebhookEventType[]; enabled?: boolean }): Promise<EndpointRow | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [];
    if (changes.url !== undefined) sets.push('url = ?') && values.push(changes.url);
    if (changes.description !== undefined) sets.push('description = ?') && values.push(changes.description);
    if (changes.eventTypes !== undefined) sets.push('event_types = ?::text[]') && values.push(`{${changes.eventTypes.join(',')}}`);
    if (changes.enabled !== undefined) {
      sets.push('enabled = ?') && values.push(changes.enabled);
      sets.push(changes.enabled ? 'disabled_reason = null, failing_since = null' : `disabled_reason = 'owner'`);
    }
    const [row] = await this.em().execute<EndpointRow[]>(`update webhook_endpoints set ${[...sets, 'updated_at = now()'].join(', ')} where id = ? and user_id = ? returning *`, [...values, id, userId]);
    return row;
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const rows = await this.em().execute<{ id: string }[]>('delete from webhook_endpoints where id = ? and user_id = ? returning id', [id, userId]);
    return rows.length > 0;
  }

  /** The new secret signs from now on; the old one signs beside it until `graceMs` from now. */
  async rotate(userId: string, id: string, secret: string, graceMs: number): Promise<EndpointRow | undefined> {
    const [row] = await this.em().execute<EndpointRow[]>(
      `update webhook_endpoints set previous_secret = secret, previous_secret_until = now() + (? * interval '1 millisecond'), secret = ?, updated_at = now()
        where id = ? and user_id = ? returning *`,
      [graceMs, secret, id, userId],
    );
    return row;
  }

  deliveries(userId: string, endpointId: string, limit: number): Promise<DeliveryRow[]> {
    return this.em().execute(
      `select ${DELIVERY_COLUMNS} from webhook_deliveries d join webhook_messages m on m.id = d.message_id
        where d.endpoint_id = ? and d.user_id = ? order by d.created_at desc, d.id desc limit ?`,
      [endpointId, userId, limit],
    );
  }

  /** A new delivery of the same message (the same webhook-id) to the same endpoint, due now; undefined for a foreign id. */
  async replay(userId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
    const [row] = await this.em().execute<DeliveryRow[]>(
      `with d as (
         insert into webhook_deliveries (id, endpoint_id, message_id, user_id, next_attempt_at)
         select ?, endpoint_id, message_id, user_id, now() from webhook_deliveries where id = ? and user_id = ?
         returning *)
       select ${DELIVERY_COLUMNS} from d join webhook_messages m on m.id = d.message_id`,
      [newId(), deliveryId, userId],
    );
    return row;
  }

  /** A `webhook.test` message to one endpoint (whatever types it subscribes to). */
  async enqueueTest(userId: string, endpointId: string, data: unknown): Promise<string> {
    const id = newMessageId();
    await this.em().execute(
      `with msg as (insert into webhook_messages (id, user_id, event_type, payload) values (?, ?, 'webhook.test', ?::jsonb) returning id)
       insert into webhook_deliveries (id, endpoint_id, message_id, user_id, next_attempt_at) select ?, ?, msg.id, ?, now() from msg`,
      [id, userId, JSON.stringify(webhookEnvelope('webhook.test', data, new Date())), newId(), endpointId, userId],
    );
    return id;
  }

  /** Claims one due delivery of an enabled endpoint for `owner` until its lease ends (skipping rows others hold). */
  async claim(owner: string, leaseMs: number): Promise<ClaimedDelivery | null> {
    const [row] = await this.em().execute<ClaimedDelivery[]>(
      `with claimed as (
         update webhook_deliveries set lease_owner = ?, lease_until = now() + (? * interval '1 millisecond'), attempts = attempts + 1
          where id = (select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
                       where d.status = 'pending' and d.next_attempt_at <= now() and (d.lease_until is null or d.lease_until < now()) and e.enabled
                       order by d.next_attempt_at limit 1 for update of d skip locked)
          returning *)
       select c.id, c.message_id, c.attempts, e.url, e.secret, e.previous_secret, e.previous_secret_until, m.payload
         from claimed c join webhook_endpoints e on e.id = c.endpoint_id join webhook_messages m on m.id = c.message_id`,
      [owner, leaseMs],
    );
    return row ?? null;
  }

  /**
   * Records one attempt of a delivery `owner` holds: delivered, retried after `retryInMs`, or failed for good
   * (retryInMs null). A success ends the endpoint's failure streak; a failure starts it, and an endpoint
   * failing for longer than `disableAfterMs` is disabled: then the owner's address comes back to be told.
   */
  async record(id: string, owner: string, outcome: AttemptOutcome, retryInMs: number | null, disableAfterMs: number): Promise<{ disabled: { userId: string; email: string | null; url: string; language: 'ru' | 'en' } | null }> {
    return this.em().transactional(async (tx) => {
      const status = outcome.error === null ? 'delivered' : retryInMs === null ? 'failed' : 'pending';
      const [row] = await tx.execute<{ endpoint_id: string }[]>(
        `update webhook_deliveries set status = ?, lease_owner = null, lease_until = null,
                next_attempt_at = case when ? = 'pending' then now() + (? * interval '1 millisecond') end,
                delivered_at = case when ? = 'delivered' then now() end,
                last_attempt_at = ?, last_status_code = ?, last_error = ?, last_duration_ms = ?, last_response_body = ?,
                attempt_log = (select coalesce(jsonb_agg(x), '[]'::jsonb) from (select x from jsonb_array_elements(attempt_log || ?::jsonb) x offset greatest(jsonb_array_length(attempt_log) + 1 - ${LOG_LENGTH}, 0)) t)
          where id = ? and lease_owner = ? returning endpoint_id`,
        [status, status, retryInMs ?? 0, status, outcome.at, outcome.statusCode, outcome.error, outcome.durationMs, outcome.responseBody, JSON.stringify([{ at: outcome.at, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs }]), id, owner],
      );
      if (!row) return { disabled: null }; // the lease ended and another worker took it: its record wins
      if (outcome.error === null) {
        await tx.execute('update webhook_endpoints set failing_since = null where id = ? and failing_since is not null', [row.endpoint_id]);
        return { disabled: null };
      }
      await tx.execute('update webhook_endpoints set failing_since = coalesce(failing_since, now()) where id = ?', [row.endpoint_id]);
      const [disabled] = await tx.execute<{ user_id: string; url: string; language: 'ru' | 'en'; email: string | null }[]>(
        `update webhook_endpoints e set enabled = false, disabled_reason = 'failing', updated_at = now()
          where e.id = ? and e.enabled and e.failing_since < now() - (? * interval '1 millisecond')
          returning e.user_id, e.url, e.language, (select email from users u where u.id = e.user_id) as email`,
        [row.endpoint_id, disableAfterMs],
      );
      return { disabled: disabled ? { userId: disabled.user_id, email: disabled.email, url: disabled.url, language: disabled.language } : null };
    });
  }

  /** Frees the leases `owner` still holds (a graceful stop): those deliveries are due again at once. */
  async release(owner: string): Promise<void> {
    await this.em().execute(`update webhook_deliveries set lease_owner = null, lease_until = null where lease_owner = ? and status = 'pending'`, [owner]);
  }
}
