import type { KeyEvent } from '../events/account-event-hub.js';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { CatalogService } from '../catalog/catalog.service.js';
import { requireAdmin } from '../shared/actor.js';
import type { Actor } from '../shared/actor.js';
import { DomainError, type ValidationIssue } from '../shared/errors.js';
import { randomSecret, sha256Hex } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import type { SharedState } from '../shared/redis.js';
import { formatUsd } from '../shared/money.js';
import { parseInput } from '../shared/validation.js';
import { enqueueWebhookEvent } from '../events/outbox.js';
import { KeysRepository, type KeyRow } from './keys.repository.js';
import { accountLimitsInput, createKeyInput, keyIdInput, keyLimitsInput, type AccountLimitsInput, type CreateKeyInput, type KeyLimitsInput } from './keys.schemas.js';

export interface KeyView {
  id: string;
  label: string | null;
  providerFamily: string;
  routeGroup: string;
  /** The public plan name, or `custom` for an operator's private plan. */
  pricingPlan: string;
  monthlySpendCap: string | null;
  lastUsed: Date | null;
  createdAt: Date;
  /** An organization's key: the member who made it (null for a personal key). */
  createdBy: string | null;
}

/** A key with the limits an operator may override (revoked keys too); the plan as stored. */
export interface AdminKeyView extends KeyView {
  rpmLimit: number | null;
  concurrencyLimit: number | null;
  revokedAt: Date | null;
}

export interface CreatedKeyView extends Omit<KeyView, 'lastUsed'> {
  /** The raw key, returned once and never stored. */
  key: string;
}

/** What the inference path knows about a key after authenticating it. */
export interface KeyPrincipal {
  keyId: string;
  userId: string;
  providerFamily: string;
  routeGroup: string;
  pricingPlan: string;
  monthlySpendCap: string | null;
  rpmLimit: number | null;
  concurrencyLimit: number | null;
  /** The account's own limit on requests in flight across its keys (null: the baseline). */
  accountConcurrencyLimit: number | null;
  /** An organization's key (`userId` is the organization): the member who made it, and that member's monthly cap. */
  memberId: string | null;
  memberMonthlyCap: string | null;
  /** The ledger owner's own monthly cap (an organization's); null: none. */
  ownerMonthlyCap: string | null;
}

/** Who owns a key: the ledger owner (an account, or an organization) and, for an organization, the member who made it. */
export interface KeyOwner {
  ownerId: string;
  createdBy: string | null;
}

/** Active keys one account may hold. */
export const MAX_ACTIVE_KEYS = 100;

/** What keys take from the operator's configuration. */
export interface KeysSettings {
  /** The brand's key prefix: keys read `<prefix>-sk-…`. */
  keyPrefix: string;
}

/**
 * How long an authenticated key is trusted from the cache. Revocations and limit changes evict it at
 * once (on every process, through the shared bus); this bounds a missed eviction (a change made in the
 * database directly, or on a process without Redis). For as long again after that, the cached key is
 * still served while one lookup refreshes it: a busy key never waits on PostgreSQL.
 */
export const KEY_CACHE_TTL_MS = 60_000;
const LAST_USED_FLUSH_MS = 5_000;

export class KeysService {
  private readonly cache = new Map<string, { principal: KeyPrincipal; until: number }>();
  /** The running lookup of each key hash: concurrent requests for an unknown or expiring key share one query. */
  private readonly lookups = new Map<string, Promise<KeyPrincipal | null>>();
  /** Counts evictions, so a lookup that raced one does not put back what it evicted. */
  private evictions = 0;
  private readonly usedSince = new Map<string, Date>();
  private flushTimer?: NodeJS.Timeout;

  private readonly keys: KeysRepository;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      settings: KeysSettings;
      log: Logger;
      catalog: CatalogService;
      shared?: SharedState;
      /** Told of a key created or revoked, once committed (the account's keyEvents subscription). */
      announce?: (userId: string, event: KeyEvent) => void;
    },
    private readonly now: () => number = Date.now,
  ) {
    this.keys = new KeysRepository(deps.orm);
  }

  private get prefix(): string {
    return `${this.deps.settings.keyPrefix}-sk-`;
  }

  /** Labels of keys by id (any account's: callers show them beside rows the reader may already see). */
  async labels(ids: readonly string[]): Promise<Map<string, { id: string; label: string | null }>> {
    return new Map((await this.keys.labels(ids)).map((row) => [row.id, row]));
  }

  /** Operators: every key of one account, revoked ones included, with their limit overrides (the caller checks admin). */
  async allOfAccount(userId: string): Promise<AdminKeyView[]> {
    return (await this.keys.all(userId)).map(toAdminKeyView);
  }

  async list(actor: Actor): Promise<KeyView[]> {
    return this.listOwned(actor.userId);
  }

  /** Active keys of a ledger owner (of one member of an organization, when `createdBy` is given); the caller checks who may see them. */
  async listOwned(ownerId: string, createdBy?: string): Promise<KeyView[]> {
    return (await this.keys.active(ownerId, createdBy)).map((row) => this.toView(row));
  }

  async create(actor: Actor, raw: CreateKeyInput): Promise<CreatedKeyView> {
    return this.createOwned({ ownerId: actor.userId, createdBy: null }, raw);
  }

  /** Makes a key for a ledger owner: an account's own, or an organization's naming its member (the caller checks the member's role). */
  async createOwned(owner: KeyOwner, raw: CreateKeyInput): Promise<CreatedKeyView> {
    const { ownerId } = owner;
    const input = parseInput(createKeyInput, raw ?? {});
    const catalog = this.deps.catalog.snapshot;
    const family = input.providerFamily ?? catalog.data.families[0]!.id;
    const group = input.routeGroup ?? 'cheap';
    const plan = input.pricingPlan ?? catalog.defaultPlan;

    const issues: ValidationIssue[] = [];
    if (!catalog.families.has(family)) {
      issues.push({ loc: ['providerFamily'], msg: `Input should be one of: ${[...catalog.families.keys()].join(', ')}`, type: 'enum' });
    } else {
      const groups = catalog.publicGroupsOf(family);
      if (!groups.includes(group)) issues.push({ loc: ['routeGroup'], msg: `Input should be a route group of ${family}: ${groups.join(', ') || 'none'}`, type: 'enum' });
    }
    const publicPlans = catalog.data.plans.filter((p) => p.public).map((p) => p.id);
    if (!publicPlans.includes(plan)) issues.push({ loc: ['pricingPlan'], msg: `Input should be one of: ${publicPlans.join(', ')}`, type: 'enum' });
    if (issues.length) throw new DomainError('validation_failed', 'Request validation failed', { issues });

    const key = this.prefix + randomSecret(32);
    const row = await this.keys.insertWithin(
      ownerId,
      { label: input.label ?? null, keyHash: sha256Hex(key), keyHint: key.slice(-4), providerFamily: family, routeGroup: group, pricingPlan: plan, monthlySpendCap: input.monthlySpendCap ?? null, createdBy: owner.createdBy },
      MAX_ACTIVE_KEYS,
      (tx, created) => enqueueWebhookEvent(tx, { userId: ownerId, type: 'key.created', data: { key: { id: created.id, label: created.label, providerFamily: created.provider_family, routeGroup: created.route_group, createdAt: created.created_at } } }),
    );
    if (!row) throw new DomainError('conflict', `An account may have at most ${MAX_ACTIVE_KEYS} active keys; revoke one first`, { reason: 'too_many_keys' });
    this.deps.log.info({ keyId: row.id, userId: ownerId, createdBy: owner.createdBy ?? undefined }, 'API key created');
    this.deps.announce?.(ownerId, { kind: 'key', type: 'created', keyId: row.id, limit: null, refused: null, at: new Date() });
    const { lastUsed: _lastUsed, ...view } = this.toView(row);
    return { ...view, key };
  }

  /** Revokes one of the actor's keys; 404 for an unknown, revoked or someone else's key (ids cannot be probed). */
  async revoke(actor: Actor, keyId: string): Promise<void> {
    await this.revokeOwned({ ownerId: actor.userId, createdBy: null }, keyId, false);
  }

  /**
   * Revokes a key of a ledger owner; with `onlyOwn`, only one its member made (a member revoking their own key of
   * an organization). 404 for an unknown, revoked or someone else's key (ids cannot be probed).
   */
  async revokeOwned(owner: KeyOwner, keyId: string, onlyOwn: boolean): Promise<void> {
    const { keyId: id } = parseInput(keyIdInput, { keyId });
    const { ownerId } = owner;
    const revoked = await this.keys.revoke(
      id,
      ownerId,
      (tx, row) => enqueueWebhookEvent(tx, { userId: ownerId, type: 'key.revoked', data: { key: { id: row.id, revokedAt: row.revoked_at } } }),
      onlyOwn && owner.createdBy ? owner.createdBy : undefined,
    );
    if (!revoked) throw new DomainError('not_found', 'No such key');
    await this.evictEverywhere([id]);
    this.deps.log.info({ keyId: id, userId: ownerId }, 'API key revoked');
    this.deps.announce?.(ownerId, { kind: 'key', type: 'revoked', keyId: id, limit: null, refused: null, at: new Date() });
  }

  /** Revokes a removed member's keys of an organization inside the removal's transaction; evict them after it commits. */
  revokeMemberKeys(tx: EntityManager, organizationId: string, memberId: string): Promise<string[]> {
    return this.keys.revokeMemberKeys(tx, organizationId, memberId);
  }

  /** Ids of an owner's active keys (one member's, with `createdBy`). */
  activeKeyIds(ownerId: string, createdBy?: string): Promise<string[]> {
    return this.keys.activeIds(ownerId, createdBy);
  }

  /** Drops keys' cached authentication here and on every other process (revoked, or their caps changed). */
  async evictEverywhere(keyIds: readonly string[]): Promise<void> {
    for (const id of keyIds) {
      this.evictKey(id);
      await this.deps.shared?.publish({ type: 'key-evicted', keyId: id });
    }
  }

  /**
   * Resolves a raw key to its principal. The key is looked up by its SHA-256, so no comparison ever
   * runs on the secret itself; results are cached so the inference path does not hit the database.
   */
  async authenticate(rawKey: string): Promise<KeyPrincipal | null> {
    if (!rawKey.startsWith(this.prefix) || rawKey.length > 200) return null;
    const hash = sha256Hex(rawKey);
    const cached = this.cache.get(hash);
    if (cached) {
      const now = this.now();
      if (cached.until > now) return cached.principal;
      if (cached.until + KEY_CACHE_TTL_MS > now) {
        // Past its time: served while one lookup refreshes it (with PostgreSQL down, load keeps serving it).
        void this.lookUp(hash).catch(() => undefined);
        return cached.principal;
      }
    }
    return this.lookUp(hash);
  }

  private lookUp(hash: string): Promise<KeyPrincipal | null> {
    let pending = this.lookups.get(hash);
    if (!pending) {
      pending = this.load(hash).finally(() => this.lookups.delete(hash));
      this.lookups.set(hash, pending);
    }
    return pending;
  }

  private async load(hash: string): Promise<KeyPrincipal | null> {
    const evictions = this.evictions;
    let row: KeyRow | undefined;
    try {
      row = await this.keys.byHash(hash);
    } catch (error) {
      // PostgreSQL unreachable: a key seen before is still good (revocations evict it from the cache at once);
      // one never seen cannot be checked, which is a retryable 503, never a 401 or a 500.
      const cached = this.cache.get(hash);
      if (cached) return cached.principal;
      if (error instanceof DomainError) throw error;
      throw new DomainError('unavailable', 'API keys cannot be checked right now; retry shortly', { retryAfterSeconds: 2, reason: 'auth_unavailable' });
    }
    if (!row) {
      this.cache.delete(hash);
      return null;
    }
    const principal = toPrincipal(row);
    // An eviction while this query ran may have been this very key's revocation: then it is not cached again.
    if (this.evictions === evictions) this.cache.set(hash, { principal, until: this.now() + KEY_CACHE_TTL_MS });
    return principal;
  }

  /** Notes a key's use; written in batches so requests never wait for it. */
  markUsed(keyId: string, at = new Date()): void {
    this.usedSince.set(keyId, at);
    this.flushTimer ??= setTimeout(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS).unref();
  }

  /** Writes pending last-used times in one statement (also called at shutdown). */
  async flushLastUsed(): Promise<void> {
    this.flushTimer = undefined;
    if (this.usedSince.size === 0) return;
    const batch = [...this.usedSince.entries()];
    this.usedSince.clear();
    try {
      await this.keys.touch(batch);
    } catch (error) {
      this.deps.log.warn({ err: error, keys: batch.length }, 'could not record key last-used times');
    }
  }

  /** Admin: per-key overrides of the baseline limits and the monthly spend cap. */
  async setLimits(actor: Actor, raw: KeyLimitsInput): Promise<KeyPrincipal> {
    requireAdmin(actor);
    const input = parseInput(keyLimitsInput, raw);
    const row = await this.keys.setLimits(input.keyId, input);
    if (!row) throw new DomainError('not_found', 'No such key');
    await this.evictEverywhere([row.id]);
    return toPrincipal(row);
  }

  /**
   * Admin: an account's own limit on requests in flight across its keys. Its keys' cached authentication
   * is dropped on every process, so the next request of each carries the new limit.
   */
  async setAccountLimits(actor: Actor, raw: AccountLimitsInput): Promise<{ userId: string; concurrencyLimit: number | null }> {
    requireAdmin(actor);
    const input = parseInput(accountLimitsInput, raw);
    const account = await this.keys.setAccountConcurrency(input.userId, input.concurrencyLimit);
    if (!account) throw new DomainError('not_found', 'No such account');
    await this.evictEverywhere(account.keyIds);
    return { userId: input.userId, concurrencyLimit: account.concurrencyLimit };
  }

  /** The (family, group, plan) scopes of a user's active keys. */
  async scopesOf(userId: string): Promise<{ family: string; group: string; plan: string }[]> {
    return this.keys.scopesOf(userId);
  }

  /** Drops a key's cached authentication (revoked or changed here or on another process). */
  evictKey(keyId: string): void {
    this.evictions += 1;
    for (const [hash, entry] of this.cache) if (entry.principal.keyId === keyId) this.cache.delete(hash);
  }

  /** The owner's view: the plan by its public name (`custom` for an operator's private plan). */
  private toView(row: KeyRow): KeyView {
    return keyView(row, this.deps.catalog.snapshot.publicPlanName(row.pricing_plan));
  }
}

function keyView(row: KeyRow, pricingPlan: string): KeyView {
  return {
    id: row.id,
    label: row.label,
    providerFamily: row.provider_family,
    routeGroup: row.route_group,
    pricingPlan,
    monthlySpendCap: row.monthly_spend_cap_usd === null ? null : formatUsd(row.monthly_spend_cap_usd),
    lastUsed: row.last_used_at ? new Date(row.last_used_at) : null,
    createdAt: new Date(row.created_at),
    createdBy: row.created_by,
  };
}

/** The operator's view: the plan as stored, the limit overrides, and when it was revoked. */
function toAdminKeyView(row: KeyRow): AdminKeyView {
  return {
    ...keyView(row, row.pricing_plan),
    rpmLimit: row.rpm_limit,
    concurrencyLimit: row.concurrency_limit,
    revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
  };
}

function toPrincipal(row: KeyRow): KeyPrincipal {
  return {
    keyId: row.id,
    userId: row.user_id,
    providerFamily: row.provider_family,
    routeGroup: row.route_group,
    pricingPlan: row.pricing_plan,
    monthlySpendCap: row.monthly_spend_cap_usd === null ? null : formatUsd(row.monthly_spend_cap_usd),
    rpmLimit: row.rpm_limit,
    concurrencyLimit: row.concurrency_limit,
    accountConcurrencyLimit: row.account_concurrency_limit ?? null,
    memberId: row.created_by,
    memberMonthlyCap: row.member_cap_usd == null ? null : formatUsd(row.member_cap_usd),
    ownerMonthlyCap: row.owner_cap_usd == null ? null : formatUsd(row.owner_cap_usd),
  };
}
