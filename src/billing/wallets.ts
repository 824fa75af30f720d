import { Decimal } from 'decimal.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../shared/errors.js';
import { toUnits, unitsToMoney, type Units } from '../shared/money.js';
import { loadWalletFigures, type WalletFigures } from './wallets.repository.js';

/** How long an in-memory hold may live before the sweep drops it (its request is long gone by then). */
export const WALLET_HOLD_TTL_MS = 10 * 60_000;
/** Accounts idle this long with nothing held are dropped from memory and reloaded on next use. */
const IDLE_EVICT_MS = 10 * 60_000;

/** Amounts in memory are in units (exact integers, see `Units`): a reservation is a few integer operations. */
interface AccountState {
  /** Ledger balance (paid + bonus) as loaded, moved by every settlement and credit since. */
  balance: Units;
  creditLimit: Units;
  partnerUntil: number | null;
  held: Units;
  lastUsed: number;
}

interface KeySpend {
  /** UTC month, `YYYY-MM`, the figures below belong to. */
  month: string;
  spent: Units;
  held: Units;
}

export interface WalletHold {
  readonly id: string;
  readonly userId: string;
  readonly keyId: string | null;
  /** An organization's key: the member whose month it spends. */
  readonly memberId: string | null;
  readonly amount: Units;
  readonly expiresAt: number;
}

export interface HoldOwner {
  userId: string;
  keyId: string | null;
  /** An organization's key: the member whose month the cost goes to (the hold names it where this process made it). */
  memberId?: string | null;
  /** For a durable hold this process did not create: the amount it still holds. */
  durableAmount?: Decimal.Value;
}

export interface ReserveRequest {
  /** Unique per request (or video task phase): reserving the same id twice returns the first hold. */
  id: string;
  userId: string;
  keyId: string | null;
  /** The key's monthly spend cap, if any (from the authenticated key). */
  monthlySpendCap: string | null;
  amount: Units;
  ttlMs?: number;
  /** An organization's key: the member who made it, and that member's monthly cap across their keys of it. */
  memberId?: string | null;
  memberMonthlyCap?: string | null;
  /** The ledger owner's own monthly cap across all its keys (an organization's). */
  ownerMonthlyCap?: string | null;
}

/** The refusals of the caps beyond the key's: an organization member's month, and the organization's. */
export const memberCapReached = () => new DomainError('spend_cap_reached', 'Your monthly spend cap in this organization is reached', { reason: 'member_spend_cap_reached' });
export const ownerCapReached = () => new DomainError('spend_cap_reached', "The organization's monthly spend cap is reached", { reason: 'organization_spend_cap_reached' });

export interface WalletView {
  balance: Decimal;
  held: Decimal;
  available: Decimal;
  keyMonthSpent: Decimal | null;
}

/**
 * Admission against balances and spend caps: this process's `Wallets`, or `SharedWallets` (Redis)
 * when several processes serve one database. Reservations are atomic either way.
 */
export interface WalletStore {
  /** Whether a reservation can run without loading: the account, the key's month and, when given, the member's and the owner's. */
  isWarm(userId: string, keyId: string | null, memberId?: string | null, ownerCapped?: boolean): boolean;
  warm(userId: string, keyId: string | null, memberId?: string | null, ownerCapped?: boolean): Promise<void>;
  reserve(request: ReserveRequest): WalletHold | Promise<WalletHold>;
  settle(holdId: string, cost: Units, owner: HoldOwner): void;
  release(holdId: string, owner?: HoldOwner): boolean;
  has(holdId: string): boolean;
  credit(userId: string, amount: Decimal.Value): void;
  setCreditLine(userId: string, until: Date | null, limit: Decimal.Value): void;
  view(userId: string, keyId: string | null): WalletView | null | Promise<WalletView | null>;
  sweep(): number;
  readonly activeHolds: number;
  /** Stops background work (lease renewal) at shutdown. */
  stop?(): void;
}

/** The last month asked for: [from, to) in epoch ms and its name. Every request asks, and it changes once a month. */
let lastMonth = { from: 0, to: 0, name: '' };

/** The UTC month of `at`, `YYYY-MM`. */
export function monthOf(at: number): string {
  if (at >= lastMonth.from && at < lastMonth.to) return lastMonth.name;
  const date = new Date(at);
  const from = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const to = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  lastMonth = { from, to, name: date.toISOString().slice(0, 7) };
  return lastMonth.name;
}

/**
 * The admission side of billing, in memory: per-account balances and per-key month spend, loaded
 * once from PostgreSQL and then moved by this process's own settlements and credits. A reservation is
 * a synchronous check-and-add in one event-loop turn, so concurrent requests can never overspend and
 * the /v1 hot path never waits on the database once an account is warm. PostgreSQL stays the truth
 * for money: every settlement is appended to the ledger (in batches); this is its admission cache.
 * Several processes share it through Redis (the scale-out capability).
 */
export class Wallets implements WalletStore {
  private readonly accounts = new Map<string, AccountState>();
  private readonly keys = new Map<string, KeySpend>();
  /** An organization member's month across their keys of it, by `<organization>:<member>` (holds this process made). */
  private readonly members = new Map<string, KeySpend>();
  /** A capped ledger owner's own month (an organization's); what it holds is the account's `held`. */
  private readonly owners = new Map<string, { month: string; spent: Units }>();
  private readonly holds = new Map<string, WalletHold>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: { orm: MikroORM },
    private readonly now: () => number = Date.now,
  ) {}

  /** True when `reserve` for this account and key (and member, and the owner's cap) can run without loading anything. */
  isWarm(userId: string, keyId: string | null, memberId: string | null = null, ownerCapped = false): boolean {
    const month = monthOf(this.now());
    const key = keyId === null || this.keys.get(keyId)?.month === month;
    const member = memberId === null || this.members.get(`${userId}:${memberId}`)?.month === month;
    const owner = !ownerCapped || this.owners.get(userId)?.month === month;
    return this.accounts.has(userId) && key && member && owner;
  }

  /** Loads the account (and key, member, owner month) figures once; concurrent callers share one load. */
  async warm(userId: string, keyId: string | null, memberId: string | null = null, ownerCapped = false): Promise<void> {
    if (this.isWarm(userId, keyId, memberId, ownerCapped)) return;
    const loadKey = `${userId}:${keyId ?? ''}:${memberId ?? ''}:${ownerCapped ? 'o' : ''}`;
    let pending = this.loading.get(loadKey);
    if (!pending) {
      pending = this.load(userId, keyId, memberId, ownerCapped).finally(() => this.loading.delete(loadKey));
      this.loading.set(loadKey, pending);
    }
    await pending;
  }

  private async load(userId: string, keyId: string | null, memberId: string | null, ownerCapped: boolean): Promise<void> {
    const month = monthOf(this.now());
    let row: WalletFigures;
    try {
      row = await loadWalletFigures(this.deps.orm.em.fork(), userId, keyId, { memberId, ownerCapped });
    } catch (error) {
      // PostgreSQL is the truth for money: without it an account that is not loaded yet cannot be admitted.
      // Say so as a retryable 503 (never a 500, never an unchecked admission).
      if (error instanceof DomainError) throw error;
      throw new DomainError('unavailable', 'Billing is temporarily unavailable; retry shortly', { retryAfterSeconds: 2, reason: 'billing_unavailable' });
    }
    // A concurrent load or an earlier warm-up may have filled these in; the in-memory figures are newer.
    if (!this.accounts.has(userId)) {
      this.accounts.set(userId, {
        balance: toUnits(row.balance),
        creditLimit: toUnits(row.creditLimit),
        partnerUntil: row.partnerUntil,
        held: row.durableHolds.reduce((sum, hold) => sum + toUnits(hold.amount), 0n),
        lastUsed: this.now(),
      });
    }
    if (keyId !== null && this.keys.get(keyId)?.month !== month) {
      const keyHeld = row.durableHolds.filter((hold) => hold.keyId === keyId).reduce((sum, hold) => sum + toUnits(hold.amount), 0n);
      this.keys.set(keyId, { month, spent: toUnits(row.keySpent ?? 0), held: keyHeld });
    }
    // A member's held counts the holds this process makes from now (durable holds loaded above are the account's only).
    const memberKey = `${userId}:${memberId}`;
    if (memberId !== null && this.members.get(memberKey)?.month !== month) {
      this.members.set(memberKey, { month, spent: toUnits(row.memberSpent ?? 0), held: this.members.get(memberKey)?.held ?? 0n });
    }
    if (ownerCapped && this.owners.get(userId)?.month !== month) this.owners.set(userId, { month, spent: toUnits(row.ownerSpent ?? 0) });
  }

  /**
   * Reserves `amount` against available balance (balance + active credit line - holds) and the key's
   * monthly cap. Synchronous: call `warm` first. Throws 402 `insufficient_balance` / `spend_cap_reached`.
   */
  reserve(request: ReserveRequest): WalletHold {
    const existing = this.holds.get(request.id);
    if (existing) return existing;
    const account = this.accounts.get(request.userId);
    if (!account) throw new Error(`wallet of ${request.userId} is not loaded`);
    const amount = request.amount;
    if (amount < 0n) throw new Error('a hold cannot be negative');
    const now = this.now();

    if (amount > this.availableOf(account, now) && (this.sweepExpired(now) === 0 || amount > this.availableOf(account, now))) {
      throw new DomainError('insufficient_balance', 'Insufficient balance for this request; top up to continue');
    }
    const key = request.keyId === null ? null : this.keySpendOf(request.keyId, now);
    if (key && request.monthlySpendCap !== null && key.spent + key.held + amount > toUnits(request.monthlySpendCap)) {
      throw new DomainError('spend_cap_reached', "This key's monthly spend cap is reached");
    }
    const memberId = request.memberId ?? null;
    const member = memberId === null ? null : this.spendOf(this.members, `${request.userId}:${memberId}`, now);
    if (member && request.memberMonthlyCap != null && member.spent + member.held + amount > toUnits(request.memberMonthlyCap)) throw memberCapReached();
    if (request.ownerMonthlyCap != null) {
      const owner = this.ownerSpendOf(request.userId, now);
      if (owner.spent + account.held + amount > toUnits(request.ownerMonthlyCap)) throw ownerCapReached();
    }

    account.held += amount;
    account.lastUsed = now;
    if (key) key.held += amount;
    if (member) member.held += amount;
    const hold: WalletHold = { id: request.id, userId: request.userId, keyId: request.keyId, memberId, amount, expiresAt: now + (request.ttlMs ?? WALLET_HOLD_TTL_MS) };
    this.holds.set(hold.id, hold);
    return hold;
  }

  /** Closes a hold and books its real cost (already appended, or about to be, to the ledger). */
  settle(holdId: string, cost: Units, owner: HoldOwner): void {
    const memberId = this.holds.get(holdId)?.memberId ?? owner.memberId ?? null;
    this.close(holdId, owner);
    const account = this.accounts.get(owner.userId);
    if (account) account.balance -= cost;
    const month = monthOf(this.now());
    for (const spend of [owner.keyId ? this.keys.get(owner.keyId) : undefined, memberId ? this.members.get(`${owner.userId}:${memberId}`) : undefined, this.owners.get(owner.userId)]) {
      if (spend && spend.month === month) spend.spent += cost;
    }
  }

  /** Closes a hold without charging. Idempotent. */
  release(holdId: string, owner?: HoldOwner): boolean {
    return this.close(holdId, owner) !== null;
  }

  /**
   * Closes a hold. A durable hold made before this process loaded the account is not tracked one by
   * one (it arrived in the loaded total); `owner.durableAmount` takes it out of that total.
   */
  private close(holdId: string, owner?: HoldOwner): WalletHold | null {
    const hold = this.holds.get(holdId);
    if (hold) this.holds.delete(holdId);
    const amount = hold?.amount ?? (owner?.durableAmount === undefined ? null : toUnits(owner.durableAmount));
    if (amount === null) return null;
    const account = this.accounts.get(hold?.userId ?? owner!.userId);
    if (account) account.held = account.held > amount ? account.held - amount : 0n;
    const keyId = hold ? hold.keyId : owner!.keyId;
    const key = keyId ? this.keys.get(keyId) : undefined;
    if (key) key.held = key.held > amount ? key.held - amount : 0n;
    const member = hold?.memberId ? this.members.get(`${hold.userId}:${hold.memberId}`) : undefined;
    if (member) member.held = member.held > amount ? member.held - amount : 0n;
    return hold ?? null;
  }

  private sweepExpired(now: number): number {
    let expired = 0;
    for (const hold of this.holds.values()) {
      if (hold.expiresAt <= now) {
        this.close(hold.id);
        expired += 1;
      }
    }
    return expired;
  }

  /** A committed ledger change made outside a settlement (top-up, adjustment, refund). */
  credit(userId: string, amount: Decimal.Value): void {
    const account = this.accounts.get(userId);
    if (account) account.balance += toUnits(amount);
  }

  /** The trusted-partner credit line changed. */
  setCreditLine(userId: string, until: Date | null, limit: Decimal.Value): void {
    const account = this.accounts.get(userId);
    if (!account) return;
    account.partnerUntil = until ? until.getTime() : null;
    account.creditLimit = toUnits(limit);
  }

  view(userId: string, keyId: string | null): WalletView | null {
    const account = this.accounts.get(userId);
    if (!account) return null;
    const now = this.now();
    return {
      balance: unitsToMoney(account.balance),
      held: unitsToMoney(account.held),
      available: unitsToMoney(this.availableOf(account, now)),
      keyMonthSpent: keyId === null ? null : unitsToMoney(this.keySpendOf(keyId, now).spent),
    };
  }

  /** Drops holds past their expiry and accounts idle with nothing held; returns how many holds expired. */
  sweep(): number {
    const now = this.now();
    const expired = this.sweepExpired(now);
    for (const [userId, account] of this.accounts) {
      if (account.held === 0n && account.lastUsed < now - IDLE_EVICT_MS && !this.loading.size) this.accounts.delete(userId);
    }
    return expired;
  }

  has(holdId: string): boolean {
    return this.holds.has(holdId);
  }

  get activeHolds(): number {
    return this.holds.size;
  }

  private availableOf(account: AccountState, now: number): Units {
    const partner = account.partnerUntil !== null && account.partnerUntil > now;
    return account.balance + (partner ? account.creditLimit : 0n) - account.held;
  }

  private keySpendOf(keyId: string, now: number): KeySpend {
    return this.spendOf(this.keys, keyId, now);
  }

  private spendOf(spends: Map<string, KeySpend>, id: string, now: number): KeySpend {
    const month = monthOf(now);
    let spend = spends.get(id);
    if (!spend || spend.month !== month) {
      // A new month starts with nothing spent; holds carried over still count.
      spend = { month, spent: 0n, held: spend?.held ?? 0n };
      spends.set(id, spend);
    }
    return spend;
  }

  private ownerSpendOf(userId: string, now: number): { month: string; spent: Units } {
    const month = monthOf(now);
    let owner = this.owners.get(userId);
    if (!owner || owner.month !== month) this.owners.set(userId, (owner = { month, spent: 0n }));
    return owner;
  }
}
