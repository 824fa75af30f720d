import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { CatalogService } from '../catalog/catalog.service.js';
import { requireAdmin, type Actor } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import type { SharedState } from '../shared/redis.js';
import { parseInput } from '../shared/validation.js';
import type { UpstreamDefinition } from './config.js';
import type { Upstream } from './model.js';
import { credentialIssues, failIfAny, kindChangeIssues, priceIssues, routeIssues, upstreamIssues } from './upstream-checks.js';
import { writeDefinitions, type ApplyResult } from './upstream-file.js';
import { UpstreamRegistry, type UpstreamsListener } from './upstream-registry.js';
import { upstreamViews, type UpstreamView } from './upstream-views.js';
import { UpstreamsRepository, type CredentialFields, type UpstreamsWriter } from './upstreams.repository.js';
import {
  addCredentialInput,
  createUpstreamInput,
  credentialRef,
  setEnabledInput,
  setPricesInput,
  setRoutesInput,
  updateCredentialInput,
  updateUpstreamInput,
  upstreamRef,
  type AddCredentialInput,
  type CreateUpstreamInput,
  type SetEnabledInput,
  type SetPricesInput,
  type SetRoutesInput,
  type UpdateCredentialInput,
  type UpdateUpstreamInput,
} from './upstreams.schemas.js';
import { CredentialVault, lastCharacters } from './vault.js';

export interface UpstreamsSettings {
  /** Where a generated secret key is kept outside production. */
  dataDir: string;
  /** In production BAIKAL_SECRET_KEY must be set (no generated key). */
  production: boolean;
  /** The operator file's upstreams: the seed of empty tables and what `apply-upstreams` applies. */
  definitions: UpstreamDefinition[];
}

export interface UpstreamsServiceDeps {
  orm: MikroORM;
  settings: UpstreamsSettings;
  log: Logger;
  /** The live catalog routes and prices are checked against. */
  catalog: CatalogService;
  shared?: SharedState;
  /** Where credentials named by variable are read: the gateway's own environment. */
  env: NodeJS.ProcessEnv;
}

/**
 * Managed upstreams: admins' edits (each checked like the operator file and against the live catalog, committed
 * in one transaction, then taken by every process), the registry the gateway routes from, and the operator
 * commands (apply the file, rotate the secret key). Secrets go in once and never come out of a view.
 */
export class UpstreamsService {
  private readonly repository: UpstreamsRepository;
  private readonly vault: CredentialVault;
  private readonly registry: UpstreamRegistry;

  constructor(private readonly deps: UpstreamsServiceDeps) {
    this.repository = new UpstreamsRepository(deps.orm);
    // A malformed BAIKAL_SECRET_KEY stops the start here, in one line naming it.
    this.vault = new CredentialVault({ env: deps.env, dataDir: deps.settings.dataDir, production: deps.settings.production, log: deps.log });
    this.registry = new UpstreamRegistry({ repository: this.repository, vault: this.vault, env: deps.env, log: deps.log, shared: deps.shared, definitions: deps.settings.definitions });
  }

  // ---- the registry, for the composition root

  /** Seeds empty tables from the operator file on first start, then reads and resolves the stored upstreams. */
  load(): Promise<Upstream[]> {
    return this.registry.load();
  }

  /** Called with every new set of upstreams (after each change here or in another process). Returns an unsubscribe. */
  onChange(listener: UpstreamsListener): () => void {
    return this.registry.onChange(listener);
  }

  /** A bus message `{type: 'upstreams-changed', version}` from another process. */
  adoptRemote(version: number): Promise<void> {
    return this.registry.adoptRemote(version);
  }

  /** Reloads if the stored version moved on without a bus message reaching us (a command run without Redis). */
  poll(): Promise<void> {
    return this.registry.poll();
  }

  secrets(): string[] {
    return this.registry.secrets();
  }

  get upstreams(): Upstream[] {
    return this.registry.upstreams;
  }

  get version(): number {
    return this.registry.version;
  }

  // ---- operator commands

  /** Applies the operator file's upstreams (upsert by id; the others kept, or deleted with `prune`). */
  async applyFile(definitions: UpstreamDefinition[], options: { prune: boolean }): Promise<ApplyResult> {
    return this.commit((tx) => writeDefinitions(tx, definitions, options));
  }

  /**
   * Re-seals every stored secret not sealed with the current key (read with BAIKAL_SECRET_KEYS_OLD). All or
   * nothing: one that no configured key opens stops the rotation, naming its credential. Returns how many changed.
   */
  async rotateSecrets(): Promise<number> {
    if (!this.vault.canSeal) throw new Error('rotate-secrets needs BAIKAL_SECRET_KEY (the key to seal with)');
    return this.repository.transaction(async (tx) => {
      const stale = (await tx.sealedCredentials()).filter((row) => !this.vault.isCurrent(row.sealed_secret!));
      const unreadable: string[] = [];
      const resealed: [string, string][] = [];
      for (const row of stale) {
        const context = { upstreamId: row.upstream_id, credentialId: row.id };
        try {
          resealed.push([row.id, this.vault.seal(this.vault.open(row.sealed_secret!, context), context)]);
        } catch {
          unreadable.push(row.id);
        }
      }
      if (unreadable.length) throw new Error(`no configured key opens the stored secret of credential ${unreadable.join(', ')}: list the key it was sealed with in BAIKAL_SECRET_KEYS_OLD (nothing was changed)`);
      for (const [id, sealed] of resealed) await tx.setSealed(id, sealed);
      return resealed.length;
    });
  }

  // ---- admin views

  async list(actor: Actor): Promise<UpstreamView[]> {
    requireAdmin(actor);
    return this.views();
  }

  async get(actor: Actor, raw: { id: string }): Promise<UpstreamView> {
    requireAdmin(actor);
    return this.view(parseInput(upstreamRef, raw).id);
  }

  // ---- admin edits

  async create(actor: Actor, raw: CreateUpstreamInput): Promise<UpstreamView> {
    requireAdmin(actor);
    const input = parseInput(createUpstreamInput, raw);
    const catalog = this.deps.catalog.snapshot;
    failIfAny([
      ...routeIssues(input.routes, input.kind, catalog, ['routes']),
      ...priceIssues(input.prices, catalog, ['prices']),
      ...input.credentials.flatMap((credential, i) => this.credentialIssues(credential, ['credentials', i])),
    ]);
    await this.commit(async (tx) => {
      failIfAny(upstreamIssues(input, new Set(await tx.upstreamIds()), { kind: false }));
      const { id, credentials, routes, prices, ...fields } = input;
      if (!(await tx.insertUpstream(id, fields))) throw new DomainError('conflict', `An upstream ${id} exists already`, { reason: 'upstream_exists' });
      for (const credential of credentials) {
        const credentialId = newId();
        await tx.insertCredential(credentialId, id, this.credentialFields(credential, id, credentialId));
      }
      await tx.replaceRoutes(id, routes.map((route) => ({ ...route, id: newId() })));
      await tx.replacePrices(id, prices);
    });
    return this.view(input.id);
  }

  async update(actor: Actor, raw: UpdateUpstreamInput): Promise<UpstreamView> {
    requireAdmin(actor);
    const input = parseInput(updateUpstreamInput, raw);
    await this.commit(async (tx) => {
      const row = await this.upstreamOrThrow(tx, input.id);
      const next = {
        kind: input.kind ?? row.kind,
        nativeResponses: input.nativeResponses ?? row.native_responses,
        fallback: input.fallback ?? row.fallback,
      };
      failIfAny(upstreamIssues({ id: row.id, ...next }, new Set(await tx.upstreamIds()), { kind: input.kind !== undefined && input.nativeResponses === undefined }));
      if (input.kind && input.kind !== row.kind) {
        failIfAny(kindChangeIssues(await tx.routesOf(row.id), input.kind, this.deps.catalog.snapshot));
      }
      await tx.updateUpstream(row.id, {
        ...next,
        baseUrl: input.baseUrl,
        enabled: input.enabled,
        maxConcurrent: input.maxConcurrent,
        timeouts: input.timeouts && { ...row.timeouts, ...definedOnly(input.timeouts) },
        health: input.health && { ...row.health, ...definedOnly(input.health) },
      });
    });
    return this.view(input.id);
  }

  async setEnabled(actor: Actor, raw: SetEnabledInput): Promise<UpstreamView> {
    requireAdmin(actor);
    const input = parseInput(setEnabledInput, raw);
    await this.commit(async (tx) => {
      if (!(await tx.updateUpstream(input.id, { enabled: input.enabled }))) throw notFound(input.id);
    });
    return this.view(input.id);
  }

  /** Deletes an upstream with its credentials, routes and prices; refused while another upstream falls back to it. */
  async remove(actor: Actor, raw: { id: string }): Promise<boolean> {
    requireAdmin(actor);
    const { id } = parseInput(upstreamRef, raw);
    await this.commit(async (tx) => {
      await this.upstreamOrThrow(tx, id);
      const dependents = await tx.fallingBackTo(id);
      if (dependents.length) throw new DomainError('conflict', `${dependents.join(', ')} fall${dependents.length === 1 ? 's' : ''} back to ${id}: remove it from their fallback first`, { reason: 'upstream_in_fallback' });
      await tx.deleteUpstreams([id]);
    });
    return true;
  }

  async addCredential(actor: Actor, raw: AddCredentialInput): Promise<UpstreamView> {
    requireAdmin(actor);
    const { upstreamId, ...credential } = parseInput(addCredentialInput, raw);
    failIfAny(this.credentialIssues(credential, []));
    await this.commit(async (tx) => {
      await this.upstreamOrThrow(tx, upstreamId);
      const id = newId();
      await tx.insertCredential(id, upstreamId, this.credentialFields(credential, upstreamId, id));
    });
    return this.view(upstreamId);
  }

  async updateCredential(actor: Actor, raw: UpdateCredentialInput): Promise<UpstreamView> {
    requireAdmin(actor);
    const { id, ...changes } = parseInput(updateCredentialInput, raw);
    failIfAny(this.credentialIssues(changes, []));
    const upstreamId = await this.commit(async (tx) => {
      const row = await tx.credential(id);
      if (!row) throw new DomainError('not_found', `No upstream credential ${id}`);
      const source = changes.secret != null || changes.env != null ? this.credentialFields(changes, row.upstream_id, id).source : undefined;
      await tx.updateCredential(id, { label: changes.label, enabled: changes.enabled, maxConcurrent: changes.maxConcurrent, source });
      return row.upstream_id;
    });
    return this.view(upstreamId);
  }

  async removeCredential(actor: Actor, raw: { id: string }): Promise<UpstreamView> {
    requireAdmin(actor);
    const { id } = parseInput(credentialRef, raw);
    const upstreamId = await this.commit(async (tx) => {
      const row = await tx.credential(id);
      if (!row) throw new DomainError('not_found', `No upstream credential ${id}`);
      await tx.deleteCredential(id);
      return row.upstream_id;
    });
    return this.view(upstreamId);
  }

  /** Replaces an upstream's routes; each (model, group) must be offered by the catalog and servable by its kind. */
  async setRoutes(actor: Actor, raw: SetRoutesInput): Promise<UpstreamView> {
    requireAdmin(actor);
    const input = parseInput(setRoutesInput, raw);
    await this.commit(async (tx) => {
      const row = await this.upstreamOrThrow(tx, input.upstreamId);
      failIfAny(routeIssues(input.routes, row.kind, this.deps.catalog.snapshot, ['routes']));
      await tx.replaceRoutes(row.id, input.routes.map((route) => ({ ...route, id: newId() })));
    });
    return this.view(input.upstreamId);
  }

  /** Replaces what the upstream charges us, per catalog model (decimal strings; null: nothing in that unit). */
  async setPrices(actor: Actor, raw: SetPricesInput): Promise<UpstreamView> {
    requireAdmin(actor);
    const input = parseInput(setPricesInput, raw);
    failIfAny(priceIssues(input.prices, this.deps.catalog.snapshot, ['prices']));
    await this.commit(async (tx) => {
      await this.upstreamOrThrow(tx, input.upstreamId);
      await tx.replacePrices(input.upstreamId, input.prices);
    });
    return this.view(input.upstreamId);
  }

  // ---- helpers

  /** Runs one change in a transaction (bumping the version), then has every process take the result. */
  private async commit<T>(change: (tx: UpstreamsWriter) => Promise<T>): Promise<T> {
    let committed: { result: T; version: number };
    try {
      committed = await this.repository.change(change);
    } catch (error) {
      // Two admins adding the same route or variable at once: the database keeps one.
      if (error instanceof UniqueConstraintViolationException) throw new DomainError('conflict', 'That credential or route exists already', { reason: 'duplicate' });
      throw error;
    }
    await this.registry.changed(committed.version);
    return committed.result;
  }

  private async upstreamOrThrow(tx: UpstreamsWriter, id: string) {
    const row = await tx.upstream(id, true);
    if (!row) throw notFound(id);
    return row;
  }

  private credentialIssues(credential: { secret?: string | null; env?: string | null }, at: (string | number)[]) {
    return credentialIssues(credential, at, { env: this.deps.env, canSeal: () => this.vault.canSeal });
  }

  /** Seals a new secret for its row (the only place a secret is written), or keeps the variable's name. */
  private credentialFields(
    credential: { label?: string; secret?: string; env?: string; enabled?: boolean; maxConcurrent?: number | null },
    upstreamId: string,
    credentialId: string,
  ): CredentialFields {
    const source = credential.secret != null ? { sealed: this.vault.seal(credential.secret, { upstreamId, credentialId }), last4: lastCharacters(credential.secret) } : { env: credential.env! };
    return { label: credential.label ?? credential.env ?? 'stored secret', source, enabled: credential.enabled ?? true, maxConcurrent: credential.maxConcurrent ?? null };
  }

  private async views(): Promise<UpstreamView[]> {
    const stored = await this.repository.read();
    return upstreamViews(stored, this.registry.resolve(stored));
  }

  private async view(id: string): Promise<UpstreamView> {
    const view = (await this.views()).find((upstream) => upstream.id === id);
    if (!view) throw notFound(id);
    return view;
  }
}

function notFound(id: string): DomainError {
  return new DomainError('not_found', `No upstream ${id}`);
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
