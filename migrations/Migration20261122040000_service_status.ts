import { Migration } from '@mikro-orm/migrations';

/**
 * Service status (SPEC.md Service status; src/status/status.service.ts):
 * - `model_status_checks`: the history. One row per observation of a model in a public group, or of the
 *   group as a whole (`model` null), written when the status changed and otherwise as a heartbeat at
 *   most every 30 minutes. Rows older than 30 days are pruned, except the last one of each series (the
 *   state at the cut-off).
 * - `model_status_current`: the latest probe of each (model, group), rewritten every round: the status
 *   and `checked_at` shown to users. One row per pair.
 * - `model_status_uptime_rollups`: per group, the up and observed seconds before `rolled_until`, folded
 *   in as history is pruned, so all-time uptime survives the pruning.
 */
export class Migration20261122040000_service_status extends Migration {
  override name = 'Migration20261122040000_service_status';

  override up(): void {
    this.addSql(`
      create table model_status_checks (
        id bigserial primary key,
        model text null,
        route_group text not null,
        status text not null check (status in ('active', 'unavailable')),
        observed_at timestamptz not null default now()
      )`);
    // One series per (group, model); the group's own series has model null.
    this.addSql(`create index model_status_checks_series_idx on model_status_checks (route_group, (coalesce(model, '')), observed_at desc, id desc)`);
    this.addSql(`create index model_status_checks_observed_idx on model_status_checks (observed_at)`);
    this.addSql(`
      create table model_status_current (
        route_group text not null,
        model text not null,
        status text not null check (status in ('active', 'unavailable')),
        checked_at timestamptz not null,
        primary key (route_group, model)
      )`);
    this.addSql(`
      create table model_status_uptime_rollups (
        route_group text primary key,
        up_seconds numeric not null default 0,
        observed_seconds numeric not null default 0,
        rolled_until timestamptz not null
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists model_status_uptime_rollups');
    this.addSql('drop table if exists model_status_current');
    this.addSql('drop table if exists model_status_checks');
  }
}
