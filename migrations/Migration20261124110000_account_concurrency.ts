import { Migration } from '@mikro-orm/migrations';

/** An account's own limit on requests in flight across its keys (null: ACCOUNT_CONCURRENCY_LIMIT). */
export class Migration20261124110000_account_concurrency extends Migration {
  override name = 'Migration20261124110000_account_concurrency';

  override up(): void {
    this.addSql(`alter table users add column concurrency_limit integer check (concurrency_limit > 0)`);
  }

  override down(): void {
    this.addSql(`alter table users drop column concurrency_limit`);
  }
}
