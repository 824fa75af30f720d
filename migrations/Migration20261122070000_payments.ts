import { Migration } from '@mikro-orm/migrations';

/** Payments: agreement acceptances, invoices, provider events (idempotency and audit) and bonus grants (for expiry). */
export class Migration20261122070000_payments extends Migration {
  override name = 'Migration20261122070000_payments';

  override up(): void {
    this.addSql(`
      create table agreement_acceptances (
        id uuid primary key,
        user_id uuid not null references users(id),
        terms_version text not null,
        privacy_version text not null,
        language text not null,
        surface text not null,
        client_address text null,
        accepted_at timestamptz not null default now()
      )`);
    this.addSql(`create index agreement_acceptances_user_idx on agreement_acceptances (user_id, terms_version, privacy_version)`);
    this.addSql(`
      create table invoices (
        id uuid primary key,
        user_id uuid not null references users(id),
        method text not null,
        provider text not null,
        currency text not null,
        amount_requested numeric(30,10) not null,
        usd_credit numeric(30,10) not null,
        bonus_rate numeric(30,10) not null,
        bonus_usd numeric(30,10) not null,
        status text not null default 'pending' check (status in ('pending', 'paid', 'expired', 'cancelled', 'failed')),
        payment_url text null,
        provider_ref text null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        paid_at timestamptz null,
        expires_at timestamptz not null
      )`);
    this.addSql(`create index invoices_user_idx on invoices (user_id, created_at desc)`);
    this.addSql(`create index invoices_pending_idx on invoices (expires_at) where status = 'pending'`);
    this.addSql(`
      create table payment_events (
        id uuid primary key,
        provider text not null,
        event_id text null,
        invoice_id uuid null,
        type text null,
        raw text not null,
        outcome text not null,
        received_at timestamptz not null default now()
      )`);
    this.addSql(`create unique index payment_events_event_uq on payment_events (provider, event_id) where event_id is not null and outcome = 'applied'`);
    this.addSql(`create index payment_events_invoice_idx on payment_events (invoice_id)`);
    this.addSql(`
      create table bonus_grants (
        id uuid primary key,
        user_id uuid not null references users(id),
        invoice_id uuid null references invoices(id),
        amount numeric(30,10) not null check (amount > 0),
        granted_at timestamptz not null default now(),
        expires_at timestamptz not null,
        expired_at timestamptz null
      )`);
    this.addSql(`create unique index bonus_grants_invoice_uq on bonus_grants (invoice_id) where invoice_id is not null`);
    this.addSql(`create index bonus_grants_open_idx on bonus_grants (expires_at) where expired_at is null`);
  }

  override down(): void {
    this.addSql('drop table if exists bonus_grants');
    this.addSql('drop table if exists payment_events');
    this.addSql('drop table if exists invoices');
    this.addSql('drop table if exists agreement_acceptances');
  }
}
