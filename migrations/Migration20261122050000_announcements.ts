import { Migration } from '@mikro-orm/migrations';

/** Announcements in ru and en, published by admins, with per-user read state. */
export class Migration20261122050000_announcements extends Migration {
  override name = 'Migration20261122050000_announcements';

  override up(): void {
    this.addSql(`
      create table announcements (
        id uuid primary key,
        title_ru text not null,
        title_en text not null,
        body_ru text not null,
        body_en text not null,
        published_at timestamptz null,
        created_by uuid null references users(id),
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create index announcements_published_idx on announcements (published_at desc) where published_at is not null`);
    this.addSql(`
      create table announcement_reads (
        announcement_id uuid not null references announcements(id) on delete cascade,
        user_id uuid not null references users(id),
        read_at timestamptz not null default now(),
        primary key (announcement_id, user_id)
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists announcement_reads');
    this.addSql('drop table if exists announcements');
  }
}
