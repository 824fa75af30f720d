import { Migration } from '@mikro-orm/migrations';

/** The live catalog document, balance holds, and the trusted-partner credit line. */
export class Migration20261122010000_catalog_billing extends Migration {
  override name = 'Migration20261122010000_catalog_billing';

  override up(): void {
    // One row: the whole catalog as a validated document, replaced atomically by admin edits.
    this.addSql(`
      create table catalog (
        id smallint primary key default 1 check (id = 1),
        data jsonb not null,
        version integer not null default 1,
        updated_at timestamptz not null default now()
      )`);

    this.addSql(`
      create table holds (
        id uuid primary key,
        user_id uuid not null references users(id),
        api_key_id uuid null references api_keys(id),
        request_id text not null unique,
        amount_usd numeric(30,10) not null check (amount_usd >= 0),
        status text not null default 'active' check (status in ('active', 'settled', 'released', 'expired')),
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        closed_at timestamptz null
      )`);
    this.addSql(`create index holds_active_user_idx on holds (user_id) where status = 'active'`);
    this.addSql(`create index holds_active_key_idx on holds (api_key_id) where status = 'active'`);
    this.addSql(`create index holds_active_expiry_idx on holds (expires_at) where status = 'active'`);
    this.addSql(`create index transactions_key_month_idx on transactions (api_key_id, created_at) where api_key_id is not null`);

    this.addSql(`alter table users add column trusted_partner_until timestamptz null`);
    this.addSql(`alter table users add column credit_limit_usd numeric(30,10) not null default 0 check (credit_limit_usd >= 0)`);
  }

  override down(): void {
    this.addSql('alter table users drop column credit_limit_usd');
    this.addSql('alter table users drop column trusted_partner_until');
    this.addSql('drop index if exists transactions_key_month_idx');
    this.addSql('drop table if exists holds');
    this.addSql('drop table if exists catalog');
  }
}
