import { Migration } from '@mikro-orm/migrations';

/** Identity: e-mail verification/link codes, the development outbox, messenger links. */
export class Migration20261122080000_identity extends Migration {
  override name = 'Migration20261122080000_identity';

  override up(): void {
    this.addSql(`
      create table email_outbox (
        id uuid primary key,
        to_address text not null,
        subject text not null,
        text_body text not null,
        created_at timestamptz not null default now()
      )`);
    this.addSql(`create index email_outbox_to_idx on email_outbox (lower(to_address), created_at desc)`);

    this.addSql(`
      create table email_codes (
        id uuid primary key,
        user_id uuid not null references users(id) on delete cascade,
        purpose text not null check (purpose in ('verify', 'link')),
        email text not null,
        code_hash text not null,
        attempts integer not null default 0,
        expires_at timestamptz not null,
        consumed_at timestamptz null,
        created_at timestamptz not null default now()
      )`);
    this.addSql(`create index email_codes_user_idx on email_codes (user_id, purpose, created_at desc)`);

    this.addSql(`alter table users add column messenger_user_id text null, add column messenger_name text null`);
    this.addSql(`create unique index users_messenger_uq on users (messenger_user_id) where messenger_user_id is not null`);

    this.addSql(`
      create table messenger_links (
        id uuid primary key,
        token_hash text not null unique,
        initiated_by text not null check (initiated_by in ('cabinet', 'bot')),
        user_id uuid null references users(id) on delete cascade,
        messenger_user_id text null,
        messenger_name text null,
        status text not null default 'pending' check (status in ('pending', 'confirmed', 'expired', 'failed')),
        error_code text null,
        expires_at timestamptz not null,
        confirmed_at timestamptz null,
        created_at timestamptz not null default now()
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists messenger_links');
    this.addSql('drop index if exists users_messenger_uq');
    this.addSql('alter table users drop column if exists messenger_user_id, drop column if exists messenger_name');
    this.addSql('drop table if exists email_codes');
    this.addSql('drop table if exists email_outbox');
  }
}
