import { Migration } from '@mikro-orm/migrations';

/**
 * Hourly usage rollups per account, model, group and family, kept in step with `usage_events` by the
 * batch writer (same transaction), so summaries, timeseries and the leaderboard read at most one row
 * per hour and model instead of every event. Existing events are rolled up here once.
 */
export class Migration20261122060000_usage_rollups extends Migration {
  override name = 'Migration20261122060000_usage_rollups';

  override up(): void {
    this.addSql(`
      create table usage_hourly (
        user_id uuid not null references users(id),
        hour timestamptz not null,
        model text not null,
        route_group text not null,
        provider_family text not null,
        requests integer not null,
        spend_usd numeric(30,10) not null,
        input_tokens bigint not null,
        output_tokens bigint not null,
        cache_read_tokens bigint not null,
        cache_write_tokens bigint not null,
        comparable_requests integer not null,
        comparable_spend_usd numeric(30,10) not null,
        official_cost_usd numeric(30,10) not null,
        primary key (user_id, hour, model, route_group, provider_family)
      )`);
    this.addSql(`create index usage_hourly_hour_idx on usage_hourly (hour)`);
    this.addSql(`create index usage_events_user_model_created_idx on usage_events (user_id, model, created_at desc)`);
    this.addSql(`
      insert into usage_hourly
      select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family,
             count(*), sum(amount_usd), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
             coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
             count(official_cost_usd), coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0),
             coalesce(sum(official_cost_usd), 0)
        from usage_events group by 1, 2, 3, 4, 5`);
  }

  override down(): void {
    this.addSql('drop index if exists usage_events_user_model_created_idx');
    this.addSql('drop table if exists usage_hourly');
  }
}
