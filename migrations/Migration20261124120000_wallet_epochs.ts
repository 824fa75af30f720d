import { Migration } from '@mikro-orm/migrations';

/**
 * The shared wallets' epoch per Redis prefix (src/billing/shared-wallets.ts): when Redis has no epoch,
 * a row here says it had one and lost its data, so admissions wait for every process to re-assert its holds.
 */
export class Migration20261124120000_wallet_epochs extends Migration {
  override name = 'Migration20261124120000_wallet_epochs';

  override up(): void {
    this.addSql(`create table wallet_epochs (prefix text primary key, epoch text not null, started_at timestamptz not null default now())`);
  }

  override down(): void {
    this.addSql(`drop table wallet_epochs`);
  }
}
