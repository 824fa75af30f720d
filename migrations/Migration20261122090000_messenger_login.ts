import { Migration } from '@mikro-orm/migrations';

/** Signing in with the messenger: sign-in tokens (`initiated_by = 'login'`) and the single-use `used` state. */
export class Migration20261122090000_messenger_login extends Migration {
  override name = 'Migration20261122090000_messenger_login';

  override up(): void {
    this.addSql(`alter table messenger_links drop constraint if exists messenger_links_initiated_by_check`);
    this.addSql(`alter table messenger_links add constraint messenger_links_initiated_by_check check (initiated_by in ('cabinet', 'bot', 'login'))`);
    this.addSql(`alter table messenger_links drop constraint if exists messenger_links_status_check`);
    this.addSql(`alter table messenger_links add constraint messenger_links_status_check check (status in ('pending', 'confirmed', 'expired', 'failed', 'used'))`);
  }

  override down(): void {
    this.addSql(`delete from messenger_links where initiated_by = 'login'`);
    this.addSql(`alter table messenger_links drop constraint if exists messenger_links_status_check`);
    this.addSql(`alter table messenger_links add constraint messenger_links_status_check check (status in ('pending', 'confirmed', 'expired', 'failed'))`);
    this.addSql(`alter table messenger_links drop constraint if exists messenger_links_initiated_by_check`);
    this.addSql(`alter table messenger_links add constraint messenger_links_initiated_by_check check (initiated_by in ('cabinet', 'bot'))`);
  }
}
