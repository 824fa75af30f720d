import { Migration } from '@mikro-orm/migrations';

/**
 * Announcements created in the same millisecond (timestamps come from the application clock) had no
 * stable order; a sequence number breaks the tie in creation order.
 */
export class Migration20261123000000_announcement_order extends Migration {
  override name = 'Migration20261123000000_announcement_order';

  override up(): void {
    this.addSql(`alter table announcements add column seq bigserial`);
  }

  override down(): void {
    this.addSql(`alter table announcements drop column seq`);
  }
}
