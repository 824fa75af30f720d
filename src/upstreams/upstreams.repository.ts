import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { HealthDefinition } from './config.js';
import type { UpstreamKind, UpstreamPrices, UpstreamTimeouts } from './model.js';

/**
 * The managed-upstream tables (upstreams, upstream_credentials, upstream_routes, upstream_prices, upstream_state).
 * The service keeps the rules; this is SQL and rows. Lists are passed to PostgreSQL as one JSON parameter each, so
 * a whole list is one statement.
 */
export interface UpstreamRow {
  id: string;
  kind: UpstreamKind;
  base_url: string;
  enabled: boolean;
  native_responses: boolean;
  timeouts: UpstreamTimeouts;
  max_concurrent: number;
  fallback: string[];
  /** As the operator writes it (seconds), like the file. */
  health: HealthDefinition;
  /** As the driver gives raw rows: a timestamp may come as text. */
  created_at: Date | string;
  updated_at: Date | string;
}

export interface CredentialRow {
  id: string;
  upstream_id: string;
  label: string;
  /** The vault's sealed value; null for a credential named by environment variable. */
  sealed_secret: string | null;
  secret_last4: string | null;
  secret_env: string | null;
  enabled: boolean;
  max_concurrent: number | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface RouteRow {
  id: string;
  upstream_id: string;
  model: string;
  route_group: string;
  upstream_model: string;
  weight: string;
  priority: number;
  enabled: boolean;
}

export interface PriceRow {
  upstream_id: string;
  model: string;
  input_per_1m: string | null;
  output_per_1m: string | null;
  cache_read_per_1m: string | null;
  cache_write_per_1m: string | null;
  per_image: string | null;
  per_video_second: string | null;
}

/** Every stored upstream with its credentials, routes and prices, as of one version. */
export interface StoredUpstreams {
  version: number;
  upstreams: UpstreamRow[];
  credentials: CredentialRow[];
  routes: RouteRow[];
  prices: PriceRow[];
}

export interface UpstreamFields {
  kind: UpstreamKind;
  baseUrl: string;
  enabled: boolean;
  nativeResponses: boolean;
  timeouts: UpstreamTimeouts;
  maxConcurrent: number;
  fallback: string[];
  health: HealthDefinition;
}

/** A credential to write: exactly one of a sealed secret (with its last characters) or an environment variable. */
export interface CredentialFields {
  label: string;
  source: { sealed: string; last4: string } | { env: string };
  enabled: boolean;
  maxConcurrent: number | null;
}

export interface RouteFields {
  model: string;
  group: string;
  upstreamModel: string;
  weight: number;
  priority: number;
  enabled: boolean;
}

export type PriceFields = UpstreamPrices & { model: string };

const UPSTREAM_COLUMNS = {
  kind: 'kind',
  baseUrl: 'base_url',
  enabled: 'enabled',
  nativeResponses: 'native_responses',
  timeouts: 'timeouts',
  maxConcurrent: 'max_concurrent',
  fallback: 'fallback',
  health: 'health',
} as const satisfies Record<keyof UpstreamFields, string>;

/** The placeholder and value of one upstream field (jsonb and text[] columns take JSON). */
function upstreamValue(field: keyof UpstreamFields, value: unknown): [sql: string, value: unknown] {
  if (field === 'timeouts' || field === 'health') return ['?::jsonb', JSON.stringify(value)];
  if (field === 'fallback') return ['array(select jsonb_array_elements_text(?::jsonb))', JSON.stringify(value)];
  return ['?', value];
}

/** Where the advisory lock of seeding lives ('upst' in ASCII). */
const SEED_LOCK = 0x75707374;

export class UpstreamsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Every table at one snapshot (one repeatable-read transaction), so the rows and the version agree. */
  read(): Promise<StoredUpstreams> {
    return this.orm.em.fork().transactional((em) => new UpstreamsWriter(em).read(), { isolationLevel: 'repeatable read', readOnly: true });
  }

  /**
   * Runs `change` in one transaction that first bumps the version: the state row's lock makes admin edits (and
   * applying the file) one at a time, so checks across upstreams (fallbacks) see what they guard. Returns the
   * new version with the result.
   */
  async change<T>(change: (tx: UpstreamsWriter) => Promise<T>): Promise<{ result: T; version: number }> {
    return this.orm.em.fork().transactional(async (em) => {
      const [state] = await em.execute<{ version: string }[]>('update upstream_state set version = version + 1 where id = 1 returning version');
      const result = await change(new UpstreamsWriter(em));
      return { result, version: Number(state!.version) };
    });
  }

  /** The version as stored now (another process may have moved it on). */
  /** Whether any upstream is stored (an admin's or a seeded one): a development start without one runs the demo. */
  static async anyStored(orm: MikroORM): Promise<boolean> {
    const [row] = await orm.em.fork().execute<{ any: boolean }[]>('select exists (select 1 from upstreams) as any');
    return row?.any === true;
  }

  async version(): Promise<number> {
    const [state] = await this.orm.em.fork().execute<{ version: string }[]>('select version from upstream_state where id = 1');
    return Number(state!.version);
  }

  /** One transaction that changes no version (rotating how secrets are sealed changes no upstream). */
  transaction<T>(work: (tx: UpstreamsWriter) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional((em) => work(new UpstreamsWriter(em)));
  }

  /**
   * Seeds the tables once: under an advisory lock (processes starting together take turns), only when they have
   * never been seeded and hold no upstream, and only if `seed` wrote something. True when this call seeded.
   */
  seedOnce(seed: (tx: UpstreamsWriter) => Promise<number>): Promise<boolean> {
    return this.orm.em.fork().transactional(async (em) => {
      await em.execute('select pg_advisory_xact_lock(?)', [SEED_LOCK]);
      const [state] = await em.execute<{ seeded: boolean; empty: boolean }[]>(
        'select seeded_at is not null as seeded, not exists (select 1 from upstreams) as empty from upstream_state where id = 1',
      );
      if (state!.seeded || !state!.empty) return false;
      if ((await seed(new UpstreamsWriter(em))) === 0) return false;
      await em.execute('update upstream_state set seeded_at = now(), version = version + 1 where id = 1');
      return true;
    });
  }
}

/** The statements of one transaction. */
export class UpstreamsWriter {
  constructor(private readonly em: EntityManager) {}

  async read(): Promise<StoredUpstreams> {
    const [state] = await this.em.execute<{ version: string }[]>('select version from upstream_state where id = 1');
    const upstreams = await this.em.execute<UpstreamRow[]>('select * from upstreams order by id');
    const credentials = await this.em.execute<CredentialRow[]>('select * from upstream_credentials order by upstream_id, created_at, id');
    const routes = await this.em.execute<RouteRow[]>('select id, upstream_id, model, route_group, upstream_model, weight::text as weight, priority, enabled from upstream_routes order by upstream_id, model, route_group');
    const prices = await this.em.execute<PriceRow[]>('select * from upstream_prices order by upstream_id, model');
    return { version: Number(state!.version), upstreams, credentials, routes, prices };
  }

  async upstream(id: string, lock = false): Promise<UpstreamRow | undefined> {
    const [row] = await this.em.execute<UpstreamRow[]>(`select * from upstreams where id = ?${lock ? ' for update' : ''}`, [id]);
    return row;
  }

  async upstreamIds(): Promise<string[]> {
    return (await this.em.execute<{ id: string }[]>('select id from upstreams')).map((row) => row.id);
  }

  /** The upstreams whose fallback names `id`. */
  async fallingBackTo(id: string): Promise<string[]> {
    return (await this.em.execute<{ id: string }[]>('select id from upstreams where ? = any(fallback) and id <> ? order by id', [id, id])).map((row) => row.id);
  }

  async insertUpstream(id: string, fields: UpstreamFields): Promise<boolean> {
    const names = Object.keys(UPSTREAM_COLUMNS) as (keyof UpstreamFields)[];
    const values = names.map((name) => upstreamValue(name, fields[name]));
    const rows = await this.em.execute<{ id: string }[]>(
      `insert into upstreams (id, ${names.map((name) => UPSTREAM_COLUMNS[name]).join(', ')}) values (?, ${values.map(([sql]) => sql).join(', ')})
       on conflict (id) do nothing returning id`,
      [id, ...values.map(([, value]) => value)],
    );
    return rows.length > 0;
  }

  async updateUpstream(id: string, fields: Partial<UpstreamFields>): Promise<boolean> {
    const names = (Object.keys(UPSTREAM_COLUMNS) as (keyof UpstreamFields)[]).filter((name) => fields[name] !== undefined);
    const values = names.map((name) => upstreamValue(name, fields[name]));
    const rows = await this.em.execute<{ id: string }[]>(
      `update upstreams set ${names.map((name, i) => `${UPSTREAM_COLUMNS[name]} = ${values[i]![0]}, `).join('')}updated_at = now() where id = ? returning id`,
      [...values.map(([, value]) => value), id],
    );
    return rows.length > 0;
  }

  /** Deletes upstreams (their credentials, routes and prices go with them); returns the ids deleted. */
  async deleteUpstreams(ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.em.execute<{ id: string }[]>('delete from upstreams where id in (select jsonb_array_elements_text(?::jsonb)) returning id', [JSON.stringify(ids)]);
    return rows.map((row) => row.id);
  }

  async credential(id: string): Promise<CredentialRow | undefined> {
    const [row] = await this.em.execute<CredentialRow[]>('select * from upstream_credentials where id = ? for update', [id]);
    return row;
  }

  async insertCredential(id: string, upstreamId: string, fields: CredentialFields): Promise<void> {
    const source = sourceColumns(fields.source);
    await this.em.execute(
      `insert into upstream_credentials (id, upstream_id, label, sealed_secret, secret_last4, secret_env, enabled, max_concurrent)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, upstreamId, fields.label, source.sealed, source.last4, source.env, fields.enabled, fields.maxConcurrent],
    );
  }

  async updateCredential(id: string, fields: Partial<Omit<CredentialFields, 'source'>> & { source?: CredentialFields['source'] }): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [];
    const set = (column: string, value: unknown) => {
      sets.push(`${column} = ?`);
      values.push(value);
    };
    if (fields.label !== undefined) set('label', fields.label);
    if (fields.enabled !== undefined) set('enabled', fields.enabled);
    if (fields.maxConcurrent !== undefined) set('max_concurrent', fields.maxConcurrent);
    if (fields.source) {
      const source = sourceColumns(fields.source);
      set('sealed_secret', source.sealed);
      set('secret_last4', source.last4);
      set('secret_env', source.env);
    }
    await this.em.execute(`update upstream_credentials set ${sets.map((s) => `${s}, `).join('')}updated_at = now() where id = ?`, [...values, id]);
  }

  async deleteCredential(id: string): Promise<void> {
    await this.em.execute('delete from upstream_credentials where id = ?', [id]);
  }

  /**
   * Makes an upstream's environment-variable credentials exactly `list` (by variable: a row kept keeps its id, so
   * routing's health of it carries on); its stored secrets are left alone.
   */
  async syncEnvCredentials(upstreamId: string, list: { id: string; env: string; label: string; maxConcurrent: number | null }[]): Promise<void> {
    await this.em.execute(
      `delete from upstream_credentials where upstream_id = ? and secret_env is not null
         and secret_env not in (select c->>'env' from jsonb_array_elements(?::jsonb) c)`,
      [upstreamId, JSON.stringify(list)],
    );
    await this.em.execute(
      `insert into upstream_credentials (id, upstream_id, label, secret_env, enabled, max_concurrent)
       select c.id, ?, c.label, c.env, true, c.max_concurrent from jsonb_to_recordset(?::jsonb) as c(id uuid, env text, label text, max_concurrent int)
       on conflict (upstream_id, secret_env) where secret_env is not null
       do update set label = excluded.label, max_concurrent = excluded.max_concurrent, updated_at = now()`,
      [upstreamId, JSON.stringify(list.map((c) => ({ id: c.id, env: c.env, label: c.label, max_concurrent: c.maxConcurrent })))],
    );
  }

  async routesOf(upstreamId: string): Promise<RouteRow[]> {
    return this.em.execute<RouteRow[]>('select id, upstream_id, model, route_group, upstream_model, weight::text as weight, priority, enabled from upstream_routes where upstream_id = ? order by model, route_group', [upstreamId]);
  }

  async replaceRoutes(upstreamId: string, routes: (RouteFields & { id: string })[]): Promise<void> {
    await this.em.execute('delete from upstream_routes where upstream_id = ?', [upstreamId]);
    if (!routes.length) return;
    await this.em.execute(
      `insert into upstream_routes (id, upstream_id, model, route_group, upstream_model, weight, priority, enabled)
       select r.id, ?, r.model, r.route_group, r.upstream_model, r.weight, r.priority, r.enabled
         from jsonb_to_recordset(?::jsonb) as r(id uuid, model text, route_group text, upstream_model text, weight numeric, priority int, enabled boolean)`,
      [upstreamId, JSON.stringify(routes.map((r) => ({ id: r.id, model: r.model, route_group: r.group, upstream_model: r.upstreamModel, weight: r.weight, priority: r.priority, enabled: r.enabled })))],
    );
  }

  async replacePrices(upstreamId: string, prices: PriceFields[]): Promise<void> {
    await this.em.execute('delete from upstream_prices where upstream_id = ?', [upstreamId]);
    if (!prices.length) return;
    await this.em.execute(
      `insert into upstream_prices (upstream_id, model, input_per_1m, output_per_1m, cache_read_per_1m, cache_write_per_1m, per_image, per_video_second)
       select ?, p.model, p.input, p.output, p.cache_read, p.cache_write, p.per_image, p.per_video_second
         from jsonb_to_recordset(?::jsonb) as p(model text, input numeric, output numeric, cache_read numeric, cache_write numeric, per_image numeric, per_video_second numeric)`,
      [
        upstreamId,
        JSON.stringify(
          prices.map((p) => ({ model: p.model, input: p.inputPer1m, output: p.outputPer1m, cache_read: p.cacheReadPer1m, cache_write: p.cacheWritePer1m, per_image: p.perImage, per_video_second: p.perVideoSecond })),
        ),
      ],
    );
  }

  /** Every sealed secret, locked until the transaction ends (rotation rewrites them). */
  sealedCredentials(): Promise<Pick<CredentialRow, 'id' | 'upstream_id' | 'sealed_secret'>[]> {
    return this.em.execute('select id, upstream_id, sealed_secret from upstream_credentials where sealed_secret is not null order by id for update');
  }

  async setSealed(id: string, sealed: string): Promise<void> {
    // updated_at is left alone: the credential itself did not change.
    await this.em.execute('update upstream_credentials set sealed_secret = ? where id = ?', [sealed, id]);
  }
}

function sourceColumns(source: CredentialFields['source']): { sealed: string | null; last4: string | null; env: string | null } {
  return 'env' in source ? { sealed: null, last4: null, env: source.env } : { sealed: source.sealed, last4: source.last4, env: null };
}
