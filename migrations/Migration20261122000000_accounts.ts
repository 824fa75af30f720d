import { Migration } from '@mikro-orm/migrations';

/** Accounts, cabinet sessions, API keys and the append-only ledger. */
export class Migration20261122000000_accounts extends Migration {
  override name = 'Migration20261122000000_accounts';

  override up(): void {
    this.addSql(`
      create table users (
        id uuid primary key,
        username text null,
        email text null,
        email_verified boolean not null default false,
        password_hash text null,
        is_admin boolean not null default false,
        balance_paid_usd numeric(30,10) not null default 0,
        balance_bonus_usd numeric(30,10) not null default 0,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create unique index users_username_lower_uq on users (lower(username)) where username is not null`);
    this.addSql(`create unique index users_email_lower_uq on users (lower(email)) where email is not null`);

    this.addSql(`
      create table sessions (
        id uuid primary key,
        user_id uuid not null references users(id) on delete cascade,
        token_hash text not null unique,
        created_at timestamptz not null default now(),
        last_seen_at timestamptz not null default now(),
        expires_at timestamptz not null,
        revoked_at timestamptz null,
        client_address text null,
        user_agent text null
      )`);
    this.addSql(`create index sessions_user_idx on sessions (user_id)`);

    this.addSql(`
      create table api_keys (
        id uuid primary key,
        user_id uuid not null references users(id),
        label text null,
        key_hash text not null unique,
        key_hint text not null,
        provider_family text not null,
        route_group text not null,
        pricing_plan text not null,
        monthly_spend_cap_usd numeric(30,10) null,
        rpm_limit integer null,
        concurrency_limit integer null,
        last_used_at timestamptz null,
        created_at timestamptz not null default now(),
        revoked_at timestamptz null
      )`);
    this.addSql(`create index api_keys_user_idx on api_keys (user_id, created_at desc)`);

    this.addSql(`
      create table transactions (
        id uuid primary key,
        user_id uuid not null references users(id),
        amount_usd numeric(30,10) not null,
        paid_usd numeric(30,10) not null,
        bonus_usd numeric(30,10) not null,
        kind text not null,
        api_key_id uuid null,
        provider text null,
        model text null,
        prompt_tokens integer null,
        completion_tokens integer null,
        idempotency_key text not null unique,
        note text null,
        created_at timestamptz not null default now(),
        constraint transactions_parts_sum check (amount_usd = paid_usd + bonus_usd)
      )`);
    this.addSql(`create index transactions_user_created_idx on transactions (user_id, created_at desc, id desc)`);
    // The ledger is append-only: the database itself refuses edits and deletions.
    this.addSql(`
      create function transactions_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'transactions are append-only';
      end $$`);
    this.addSql(`
      create trigger transactions_no_update_delete before update or delete on transactions
      for each row execute function transactions_append_only()`);
  }

  override down(): void {
    this.addSql('drop table if exists transactions');
    this.addSql('drop function if exists transactions_append_only()');
    this.addSql('drop table if exists api_keys');
    this.addSql('drop table if exists sessions');
    this.addSql('drop table if exists users');
  }
}
