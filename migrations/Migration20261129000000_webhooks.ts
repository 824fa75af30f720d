import { Migration } from '@mikro-orm/migrations';

/**
 * Outbound webhooks (docs/webhooks.md): an account's endpoints, the messages (one per event, its
 * `webhook-id` and envelope) and the deliveries (one per endpoint and message). A delivery row is also
 * the queue's job: `next_attempt_at` and a lease claimed with `for update skip locked`, so a crashed
 * process's delivery is taken again once its lease ends.
 */
export class Migration20261129000000_webhooks extends Migration {
  override name = 'Migration20261129000000_webhooks';

  override up(): void {
    this.addSql(`
      create table webhook_endpoints (
        id uuid primary key,
        user_id uuid not null references users(id) on delete cascade,
        url text not null,
        description text null,
        event_types text[] not null,
        secret text not null,
        previous_secret text null,
        previous_secret_until timestamptz null,
        enabled boolean not null default true,
        disabled_reason text null,
        language text not null default 'en',
        failing_since timestamptz null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create index webhook_endpoints_user_idx on webhook_endpoints (user_id, created_at)`);
    this.addSql(`
      create table webhook_messages (
        id text primary key,
        user_id uuid not null references users(id) on delete cascade,
        event_type text not null,
        payload jsonb not null,
        created_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table webhook_deliveries (
        id uuid primary key,
        endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
        message_id text not null references webhook_messages(id) on delete cascade,
        user_id uuid not null,
        status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
        attempts int not null default 0,
        next_attempt_at timestamptz null,
        lease_owner text null,
        lease_until timestamptz null,
        last_attempt_at timestamptz null,
        last_status_code int null,
        last_error text null,
        last_duration_ms int null,
        last_response_body text null,
        attempt_log jsonb not null default '[]'::jsonb,
        delivered_at timestamptz null,
        created_at timestamptz not null default now()
      )`);
    this.addSql(`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`);
    this.addSql(`create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at desc)`);
    this.addSql(`create index webhook_deliveries_message_idx on webhook_deliveries (message_id)`);
  }

  override down(): void {
    this.addSql('drop table if exists webhook_deliveries');
    this.addSql('drop table if exists webhook_messages');
    this.addSql('drop table if exists webhook_endpoints');
  }
}
