import { Migration } from '@mikro-orm/migrations';

/**
 * Upstreams managed live by admins (DESIGN.md: Upstreams), seeded once from the operator file. A credential's
 * secret is either sealed here by the credential vault (src/upstreams/vault.ts: ciphertext bound to its row, and
 * at most its last four characters in clear) or named by its environment variable; never both, never plaintext.
 * `upstream_state.version` grows with every committed change, so each process knows whether its copy is current.
 */
export class Migration20261128000000_upstreams extends Migration {
  override name = 'Migration20261128000000_upstreams';

  override up(): void {
    this.addSql(`
      create table upstreams (
        id text primary key check (id ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
        kind text not null check (kind in ('openai-compatible', 'anthropic', 'video-jobs')),
        base_url text not null,
        enabled boolean not null default true,
        native_responses boolean not null default false,
        timeouts jsonb not null,
        max_concurrent int not null check (max_concurrent > 0),
        fallback text[] not null default '{}',
        health jsonb not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint upstreams_native_responses_kind check (not native_responses or kind = 'openai-compatible')
      )`);
    this.addSql(`
      create table upstream_credentials (
        id uuid primary key,
        upstream_id text not null references upstreams (id) on delete cascade,
        label text not null,
        sealed_secret text null,
        secret_last4 text null check (char_length(secret_last4) <= 4),
        secret_env text null check (secret_env ~ '^[A-Z_][A-Z0-9_]*$'),
        enabled boolean not null default true,
        max_concurrent int null check (max_concurrent > 0),
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint upstream_credentials_one_source check (
          (sealed_secret is not null and secret_last4 is not null and secret_env is null)
          or (sealed_secret is null and secret_last4 is null and secret_env is not null))
      )`);
    this.addSql('create index upstream_credentials_upstream_idx on upstream_credentials (upstream_id)');
    // The operator file names a variable once per upstream; re-applying it updates that row instead of adding one.
    this.addSql('create unique index upstream_credentials_env_idx on upstream_credentials (upstream_id, secret_env) where secret_env is not null');
    this.addSql(`
      create table upstream_routes (
        id uuid primary key,
        upstream_id text not null references upstreams (id) on delete cascade,
        model text not null,
        route_group text not null,
        upstream_model text not null,
        weight numeric not null check (weight > 0),
        priority int not null default 0 check (priority between -1000 and 1000),
        enabled boolean not null default true,
        constraint upstream_routes_unique unique (upstream_id, model, route_group)
      )`);
    this.addSql(`
      create table upstream_prices (
        upstream_id text not null references upstreams (id) on delete cascade,
        model text not null,
        input_per_1m numeric(30, 10) null check (input_per_1m >= 0),
        output_per_1m numeric(30, 10) null check (output_per_1m >= 0),
        cache_read_per_1m numeric(30, 10) null check (cache_read_per_1m >= 0),
        cache_write_per_1m numeric(30, 10) null check (cache_write_per_1m >= 0),
        per_image numeric(30, 10) null check (per_image >= 0),
        per_video_second numeric(30, 10) null check (per_video_second >= 0),
        primary key (upstream_id, model)
      )`);
    // One row: the version every change bumps (its row lock also serialises admin edits), and whether the
    // operator file has seeded the tables (once: upstreams an admin deleted are not brought back by a restart).
    this.addSql(`
      create table upstream_state (
        id int primary key check (id = 1),
        version bigint not null default 0,
        seeded_at timestamptz null
      )`);
    this.addSql('insert into upstream_state (id, version) values (1, 0)');
  }

  override down(): void {
    this.addSql('drop table if exists upstream_state');
    this.addSql('drop table if exists upstream_prices');
    this.addSql('drop table if exists upstream_routes');
    this.addSql('drop table if exists upstream_credentials');
    this.addSql('drop table if exists upstreams');
  }
}
