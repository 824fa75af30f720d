import { Migration } from '@mikro-orm/migrations';

/**
 * What each request cost the operator: the upstream credential that served it and the upstream's own price
 * of its usage (exact, like `amount_usd`), beside what the customer paid. Operator-only columns: no user
 * query selects them. Old events have neither (null: not known), and analytics count them as such.
 * An index on `created_at` serves the operator's analytics over every account by period.
 */
export class Migration20261128100000_upstream_cost extends Migration {
  override name = 'Migration20261128100000_upstream_cost';

  override up(): void {
    this.addSql(`alter table usage_events add column upstream_credential_id text, add column upstream_cost_usd numeric(20, 10)`);
    this.addSql(`create index usage_events_created_idx on usage_events (created_at)`);
  }

  override down(): void {
    this.addSql(`drop index if exists usage_events_created_idx`);
    this.addSql(`alter table usage_events drop column upstream_credential_id, drop column upstream_cost_usd`);
  }
}
