import { Migration } from '@mikro-orm/migrations';

/**
 * Organizations (src/organizations): a team that owns a wallet. An organization is a ledger owner like an
 * account, so it has a `users` row of its own (`kind = 'organization'`, no e-mail, no password: nobody signs in as
 * it) that carries its balances, credit line and concurrency limit; the ledger, holds, shared wallets and the one
 * writer of money need nothing new. `organizations` names it, its owner and its monthly cap; members hold roles and
 * per-member monthly caps; an organization's key is an `api_keys` row owned by the organization that names the
 * member who made it (`created_by`).
 */
export class Migration20261129500000_organizations extends Migration {
  override name = 'Migration20261129500000_organizations';

  override up(): void {
    this.addSql(`alter table users add column kind text not null default 'person' check (kind in ('person', 'organization'))`);
    this.addSql(`
      create table organizations (
        id uuid primary key references users(id),
        name text not null,
        owner_id uuid not null references users(id),
        monthly_spend_cap_usd numeric(30,10) null check (monthly_spend_cap_usd >= 0),
        created_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table organization_members (
        organization_id uuid not null references organizations(id),
        user_id uuid not null references users(id),
        role text not null check (role in ('owner', 'admin', 'billing', 'member')),
        monthly_spend_cap_usd numeric(30,10) null check (monthly_spend_cap_usd >= 0),
        joined_at timestamptz not null default now(),
        primary key (organization_id, user_id)
      )`);
    this.addSql(`create index organization_members_user_idx on organization_members (user_id)`);
    // Exactly one owner per organization: the owner's row is the one with role 'owner'.
    this.addSql(`create unique index organization_members_one_owner_uq on organization_members (organization_id) where role = 'owner'`);
    this.addSql(`
      create table organization_invitations (
        id uuid primary key,
        organization_id uuid not null references organizations(id),
        email text not null,
        role text not null check (role in ('admin', 'billing', 'member')),
        token_hash text not null unique,
        invited_by uuid not null references users(id),
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        accepted_at timestamptz null,
        accepted_by uuid null references users(id),
        revoked_at timestamptz null
      )`);
    this.addSql(`create index organization_invitations_org_idx on organization_invitations (organization_id, created_at desc)`);
    this.addSql(`alter table api_keys add column created_by uuid null references users(id)`);
    this.addSql(`create index api_keys_created_by_idx on api_keys (user_id, created_by) where created_by is not null`);
  }

  override down(): void {
    this.addSql('drop index if exists api_keys_created_by_idx');
    this.addSql('alter table api_keys drop column if exists created_by');
    this.addSql('drop table if exists organization_invitations');
    this.addSql('drop table if exists organization_members');
    this.addSql('drop table if exists organizations');
    this.addSql('alter table users drop column if exists kind');
  }
}
