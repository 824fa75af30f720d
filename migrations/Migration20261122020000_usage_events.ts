import { Migration } from '@mikro-orm/migrations';

/**
 * One row per inference request (SPEC.md Usage event): what was asked, how it ended, the tokens and the
 * public prices it was billed at. `upstream_id` is for operators only and is never shown to users.
 */
export class Migration20261122020000_usage_events extends Migration {
  override name = 'Migration20261122020000_usage_events';

  override up(): void {
    this.addSql(`
      create table usage_events (
        id uuid primary key,
        user_id uuid not null references users(id),
        api_key_id uuid null references api_keys(id),
        request_id text not null,
        client_surface text not null,
        created_at timestamptz not null,
        completed_at timestamptz null,
        provider_family text not null,
        route_group text null,
        route_group_label text not null,
        endpoint text null,
        model text not null,
        status text not null check (status in ('pending', 'success', 'error', 'cancelled')),
        error_code text null,
        latency_ms integer null,
        prompt_tokens integer null,
        completion_tokens integer null,
        cache_read_tokens integer null,
        cache_write_tokens integer null,
        total_tokens integer null,
        cache_hit_ratio numeric(12,10) null,
        public_input_usd_per_1m numeric(30,12) not null,
        public_output_usd_per_1m numeric(30,12) not null,
        public_cache_read_usd_per_1m numeric(30,12) null,
        public_cache_write_usd_per_1m numeric(30,12) null,
        public_request_usd_per_generation numeric(30,12) null,
        amount_usd numeric(30,10) not null,
        official_cost_usd numeric(30,10) null,
        saved_usd numeric(30,10) null,
        transaction_id uuid null references transactions(id),
        upstream_id text null
      )`);
    this.addSql(`create index usage_events_user_created_idx on usage_events (user_id, created_at desc)`);
    this.addSql(`create index usage_events_key_created_idx on usage_events (api_key_id, created_at desc) where api_key_id is not null`);
    this.addSql(`create index usage_events_request_idx on usage_events (request_id)`);
  }

  override down(): void {
    this.addSql('drop table if exists usage_events');
  }
}
