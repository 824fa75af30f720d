import { Migration } from '@mikro-orm/migrations';

/**
 * Less work per usage event for PostgreSQL, whose CPU per request the bench measures (issue 25):
 * - usage_events' foreign keys go. Each cost a trigger and a lookup per row (a fifth of the batch's
 *   CPU). The only writer is the usage recorder, whose rows name the authenticated account and key
 *   of the request and the ledger row appended in the same statement; accounts and keys are never
 *   deleted (keys are revoked). The ledger keeps its own key to users.
 * - usage_events_key_created_idx goes: no query reads events by key (the per-key month spend is
 *   summed from transactions, which keep their index).
 */
export class Migration20261125000000_usage_write_path extends Migration {
  override name = 'Migration20261125000000_usage_write_path';

  override up(): void {
    this.addSql(`alter table usage_events drop constraint if exists usage_events_user_id_fkey,
                                       drop constraint if exists usage_events_api_key_id_fkey,
                                       drop constraint if exists usage_events_transaction_id_fkey`);
    this.addSql(`drop index if exists usage_events_key_created_idx`);
  }

  override down(): void {
    this.addSql(`create index usage_events_key_created_idx on usage_events (api_key_id, created_at desc) where api_key_id is not null`);
    this.addSql(`alter table usage_events add constraint usage_events_user_id_fkey foreign key (user_id) references users (id),
                                      add constraint usage_events_api_key_id_fkey foreign key (api_key_id) references api_keys (id),
                                      add constraint usage_events_transaction_id_fkey foreign key (transaction_id) references transactions (id)`);
  }
}
