import { Migration } from '@mikro-orm/migrations';

/** Service status history: one row per probe of a model's routes in a group (SPEC.md Service status). */
export class Migration20261122040000_service_status extends Migration {
  override name = 'Migration20261122040000_service_status';

  override up(): void {
    this.addSql(`
      create table model_status_checks (
        id bigserial primary key,
        model text not null,
        route_group text not null,
        status text not null check (status in ('active', 'unavailable')),
        latency_ms integer null,
        observed_at timestamptz not null default now()
      )`);
    this.addSql(`create index model_status_checks_model_idx on model_status_checks (model, route_group, observed_at desc)`);
    this.addSql(`create index model_status_checks_group_idx on model_status_checks (route_group, observed_at)`);
  }

  override down(): void {
    this.addSql('drop table if exists model_status_checks');
  }
}
