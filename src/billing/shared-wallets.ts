import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import type { Units } from '../shared/money.js';
import type { SharedState } from '../shared/redis.js';
import { hashSlot, tagOfSlot } from '../shared/hash-slots.js';
import { accountSeedArgs, defineWalletScripts, fromUnits, IDLE_TTL_MS, unitsText, type AdmitKind, type WalletScripts } from './shared-wallet-scripts.js';
import { memberCapReached, monthOf, ownerCapReached, WALLET_HOLD_TTL_MS, type HoldOwner, type ReserveRequest, type WalletHold, type WalletStore, type WalletView } from './wallets.js';
import { epochWitnessed, loadWalletFigures, witnessEpoch } from './wallets.repository.js';

/**
 * Balances, holds and key spend shared by every gateway process through Redis: one atomic script
 * admits a hold against what all processes hold, so N processes cannot spend N times a balance.
 * Redis is a cache seeded from PostgreSQL (the ledger stays the truth and is written as before); when
 * Redis cannot answer, billable requests are refused with 503 rather than admitted unchecked.
 *
 * Redis losing its data (a restart without persistence, a failover, an eviction) must not lose the holds
 * of requests in flight: those live only here, and a reseed from PostgreSQL would admit against a balance
 * without them. So the state lives in an epoch (`wallet-epoch`, "<id>|<ready at>"): every script that
 * admits or reads money names the epoch its process joined, and a missing or different epoch sends the
 * process to rejoin. Joining starts a new epoch when there is none; if PostgreSQL (`wallet_epochs`) says
 * Redis had one before, the new epoch admits nothing for one lease (SLOT_LEASE_SECONDS), while every live
 * process notices (at its next request or hold renewal, every third of a lease) and re-asserts its
 * in-flight holds. A process that does not re-assert within a lease is as good as dead, and its holds
 * would have expired anyway. The renewal also puts back holds an evicted account hash lost, and an
 * account is seeded (its figures from PostgreSQL, marked `s`) without dropping holds already re-asserted
 * into it. Admission stays free of PostgreSQL round trips; only starting an epoch reads it.
 *
 * A request's hold is also its concurrency slot (`admit`: one script checks the money and the limits and holds,
 * and one settles and frees), so a request costs Redis two script calls. On a Redis Cluster every key of an
 * account carries its hash tag, and the epoch is kept per hash slot (a shard that loses its data loses the
 * epochs of its own slots only; tagOfSlot names a key in each slot).
 */
export class SharedWallets implements WalletStore {
  /** Holds this process made and has not closed yet (for `has` and the shutdown check). */
  private readonly holds = new Map<string, WalletHold>();
  /** Accounts whose cached figures missed a credit while Redis was away: dropped once it is back. */
  private readonly stale = new Set<string>();
  /**
   * Settlements Redis could not take (it was away, or this process was cut from it): sent again once it is back.
   * Their holds may have lapsed meanwhile, charged in full by whoever swept them; the settlement corrects that to
   * the real cost (SETTLE). Dropping the account's figures instead would have it seeded again from PostgreSQL,
   * which lacks what other processes settled in the last flush period.
   */
  private readonly unsettled: { holdId: string; cost: Units; owner: HoldOwner }[] = [];
  /** Request holds (not durable ones) live on a lease this process renews: whether each is also a slot ('r') or not ('d'). */
  private readonly leased = new Map<string, 'r' | 'd'>();
  /** The wallet epoch this process joined, per epoch key (one, or one per hash slot on a cluster); absent: not yet, or Redis lost it. */
  private readonly epochs = new Map<string, string>();
  private readonly joining = new Map<string, Promise<void>>();
  private readonly renewTimer: NodeJS.Timeout;
  private readonly scripts: WalletScripts;
  /** One Redis keeps the gateway's concurrency slots in one set; a cluster has none (see SharedLimiter). */
  readonly globalSlotsKey: string | null;

  constructor(
    private readonly deps: { orm: MikroORM; shared: SharedState; log: Logger; leaseMs: number },
    private readonly now: () => number = Date.now,
  ) {
    this.scripts = defineWalletScripts(deps.shared.command);
    this.globalSlotsKey = deps.shared.isCluster ? null : `${deps.shared.prefix}slots`;
    deps.shared.command.on('ready', () => void this.dropStale().then(() => this.settleAgain()));
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(deps.leaseMs / 3))).unref();
  }

  stop(): void {
    clearInterval(this.renewTimer);
  }

  /** Nothing to load up front: a reservation seeds what Redis does not have. */
  isWarm(): boolean {
    return true;
  }

  async warm(): Promise<void> {}

  /** A hold without a concurrency slot: a durable one (`ttlMs`), or a request's when its slot is taken elsewhere. */
  async reserve(request: ReserveRequest): Promise<WalletHold> {
    const { hold } = await this.admit(request, 'd', NO_LIMITS);
    if (!hold) throw new Error('a hold without a slot was refused by a limit');
    return hold;
  }

  /**
   * Holds money and takes a slot in one script: kind 'r' a request (both), 'd' money only, 's' a slot only (no
   * money: `amount` 0, the account need not be seeded). A refusal by the money is thrown; one by the limits is
   * returned, with the key's window as Redis saw it.
   */
  async admit(request: ReserveRequest, kind: AdmitKind, limits: SlotLimits): Promise<Admitted> {
    const existing = this.holds.get(request.id);
    if (existing) return { hold: existing, counted: 0 };
    const amount = request.amount;
    if (amount < 0n) throw new Error('a hold cannot be negative');
    // A request's hold is leased (a crashed process's holds free within one lease); a durable hold has its own expiry.
    const leased = request.ttlMs === undefined;
    const ttlMs = request.ttlMs ?? this.deps.leaseMs;
    const month = monthOf(this.now());
    const { userId, keyId } = request;
    const memberId = request.memberId ?? null;
    const args = [request.id, unitsText(amount), keyId ?? '', capText(request.monthlySpendCap), ttlMs, month, IDLE_TTL_MS, kind];
    const limitArgs = [limits.windowMs, limits.rpm, limits.perKey, limits.perAccount, limits.global];
    const capArgs = [memberId ?? '', capText(request.memberMonthlyCap), capText(request.ownerMonthlyCap)];
    const keys = [this.accountKey(userId), this.windowKey(userId, keyId), ...(this.globalSlotsKey && kind !== 'd' ? [this.globalSlotsKey] : [])];
    // Only capped months are seeded (a member's held is summed either way).
    const months: SeedMonths = { keyId, memberId: request.memberMonthlyCap == null ? null : memberId, ownerCapped: request.ownerMonthlyCap != null };
    const verdict = await this.call(() => this.seeded(userId, months, month, () => this.scripts.walletAdmit(keys.length, ...keys, ...args, ...limitArgs, ...capArgs)));
    const [code = 0, counted = 0, resetMs = 0, freeInMs] = verdict;
    if (code === 1) throw new DomainError('insufficient_balance', 'Insufficient balance for this request; top up to continue');
    if (code === 2) throw new DomainError('spend_cap_reached', "This key's monthly spend cap is reached");
    if (code === 3) throw memberCapReached();
    if (code === 4) throw ownerCapReached();
    if (code >= 11) return { refused: LIMIT_CODES[code]!, counted, resetMs, freeInMs: freeInMs ?? limits.windowMs };
    if (code !== 0) throw unavailable(counted);
    const hold: WalletHold = { id: request.id, userId, keyId, memberId, amount, expiresAt: this.now() + (leased ? WALLET_HOLD_TTL_MS : ttlMs) };
    this.holds.set(hold.id, hold);
    if (leased) this.leased.set(hold.id, kind === 'd' ? 'd' : 'r');
    return { hold, counted };
  }

  settle(holdId: string, cost: Units, owner: HoldOwner): void {
    // The ledger row is written by the batch writer regardless; a missed cache update is sent again later.
    this.finish(holdId, cost, owner).catch((error: unknown) => this.settleLater(holdId, cost, owner, error));
  }

  release(holdId: string, owner?: HoldOwner): boolean {
    const hold = this.holds.get(holdId);
    const userId = hold?.userId ?? owner?.userId;
    if (!userId) return false;
    // Otherwise it expires in Redis by itself.
    this.finish(holdId, 0n, { userId, keyId: hold?.keyId ?? owner?.keyId ?? null }).catch(() => {});
    return hold !== undefined || owner?.durableAmount !== undefined;
  }

  /** Settles (cost 0: releases) a hold, freeing its slot with it. */
  private finish(holdId: string, cost: Units, owner: HoldOwner): Promise<number> {
    this.holds.delete(holdId);
    this.leased.delete(holdId);
    const keys = [this.accountKey(owner.userId), ...(this.globalSlotsKey ? [this.globalSlotsKey] : [])];
    return this.scripts.walletSettle(keys.length, ...keys, holdId, unitsText(cost), cost === 0n ? '' : monthOf(this.now()), owner.keyId ?? '');
  }

  has(holdId: string): boolean {
    return this.holds.has(holdId);
  }

  credit(userId: string, amount: Decimal.Value): void {
    this.scripts.walletUpdate(this.accountKey(userId), 'incr', unitsText(amount)).catch((error: unknown) => this.missed(userId, 'credit', error));
  }

  setCreditLine(userId: string, until: Date | null, limit: Decimal.Value): void {
    this.scripts
      .walletUpdate(this.accountKey(userId), 'c', unitsText(limit), 'p', String(until ? until.getTime() : 0))
      .catch((error: unknown) => this.missed(userId, 'credit line', error));
  }

  async view(userId: string, keyId: string | null): Promise<WalletView> {
    const month = monthOf(this.now());
    const epochKey = this.epochKey(userId);
    const result = await this.call(() => this.seeded(userId, { keyId, memberId: null, ownerCapped: false }, month, () => this.inEpoch(epochKey, (epoch) => this.scripts.walletView(this.accountKey(userId), epochKey, keyId ?? '', month, epoch))));
    if (result.length < 5) throw unavailable(Number(result[1] ?? 0));
    const [balance, credit, held, , spent] = result.map((units) => fromUnits(units));
    return { balance: balance!, held: held!, available: balance!.plus(credit!).minus(held!), keyMonthSpent: keyId === null ? null : spent! };
  }

  /** The key's rate window as it stands, counting nothing: {requests in it, ms until it is empty}. */
  async peek(userId: string, keyId: string, windowMs: number): Promise<number[]> {
    return this.scripts.walletPeek(this.windowKey(userId, keyId), windowMs);
  }

  /** Holds expire inside Redis; here only this process's bookkeeping of them. */
  sweep(): number {
    const now = this.now();
    let expired = 0;
    for (const [id, hold] of this.holds) if (hold.expiresAt <= now) (this.holds.delete(id), this.leased.delete(id), (expired += 1));
    return expired;
  }

  /** Runs a money script, seeding what it found missing (the account, the key's month) and running it again. */
  private async seeded<T extends (number | string)[]>(userId: string, months: SeedMonths, month: string, run: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const result = await run();
      const verdict = Number(result[0]);
      if (attempt === 3 || (verdict !== -1 && verdict !== -2)) return result;
      const seeding = await this.seed(userId, months, month);
      if (seeding[0] === -4) return seeding as T;
    }
  }

  /** Runs a script that checks the epoch in the current one: joins it first when this process has not, or Redis lost the old one. */
  private async inEpoch<T extends (number | string)[]>(epochKey: string, run: (epoch: string) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (!this.epochs.has(epochKey)) await this.join(epochKey);
      const result = await run(this.epochs.get(epochKey)!);
      if (attempt === 3 || Number(result[0]) !== -3) return result;
      this.epochs.delete(epochKey);
    }
  }

  /** Joins the current epoch of a key (starting one if Redis has none), re-asserting every hold this process has in flight under it. */
  private join(epochKey: string): Promise<void> {
    let joining = this.joining.get(epochKey);
    if (!joining) {
      joining = (async () => {
        const started = await this.startEpoch(epochKey);
        await this.reassert(epochKey, started);
      })().finally(() => this.joining.delete(epochKey));
      this.joining.set(epochKey, joining);
    }
    return joining;
  }

  private async startEpoch(epochKey: string): Promise<string> {
    const existing = await this.deps.shared.command.get(epochKey);
    if (existing) return existing;
    // Redis has no epoch: a first start, or it lost its data. PostgreSQL remembers whether one existed,
    // and only then must admissions wait one lease for every live process to re-assert its holds.
    const witness = this.witnessName(epochKey);
    const lost = await epochWitnessed(this.deps.orm.em.fork(), witness);
    const epoch = await this.scripts.walletJoinEpoch(epochKey, randomUUID(), String(lost ? this.deps.leaseMs : 0));
    await witnessEpoch(this.deps.orm.em.fork(), witness, epoch);
    if (lost) this.deps.log.warn({ epoch, waitMs: this.deps.leaseMs, epochKey }, 'Redis lost the shared wallets: a new epoch starts; billable requests wait one lease while every process re-asserts its holds');
    return epoch;
  }

  /** Puts this process's in-flight holds under an epoch key back (into account hashes seeded or not), then adopts the epoch. */
  private async reassert(epochKey: string, epoch: string): Promise<void> {
    const holds = this.leasedHolds().filter((hold) => this.epochKey(hold.userId) === epochKey);
    if (holds.length) {
      const verdict = await this.renewScript(epochKey, epoch, holds);
      if (verdict === -3) throw new Error('the wallet epoch changed while holds were re-asserted');
      this.deps.log.info({ holds: holds.length, epoch }, 'in-flight holds re-asserted into the shared wallets');
    }
    this.epochs.set(epochKey, epoch);
  }

  private leasedHolds(): WalletHold[] {
    return [...this.leased.keys()].map((id) => this.holds.get(id)).filter((hold): hold is WalletHold => hold !== undefined);
  }

  private renewScript(epochKey: string, epoch: string, holds: WalletHold[]): Promise<number> {
    const global = this.globalSlotsKey ? [this.globalSlotsKey] : [];
    const keys = [epochKey, ...global, ...holds.map((hold) => this.accountKey(hold.userId))];
    const perHold = holds.flatMap((hold) => [hold.id, unitsText(hold.amount), hold.keyId ?? '', this.leased.get(hold.id) ?? 'd', hold.memberId ?? '']);
    return this.scripts.walletRenew(keys.length, ...keys, this.deps.leaseMs, IDLE_TTL_MS, epoch, global.length ? '1' : '0', ...perHold);
  }

  /** Every third of a lease: one script call per epoch key with holds (one on a single Redis), sent together. */
  private async renew(): Promise<void> {
    if (!this.leased.size || !this.deps.shared.healthy || this.joining.size) return;
    // Taken and sent without a pause: on one connection, a settlement sent before it is applied before it.
    const byEpoch = new Map<string, WalletHold[]>();
    for (const hold of this.leasedHolds()) {
      const key = this.epochKey(hold.userId);
      byEpoch.set(key, [...(byEpoch.get(key) ?? []), hold]);
    }
    await Promise.all(
      [...byEpoch].map(async ([epochKey, holds]) => {
        try {
          const epoch = this.epochs.get(epochKey);
          if (epoch === undefined || (await this.renewScript(epochKey, epoch, holds)) === -3) {
            this.epochs.delete(epochKey);
            await this.join(epochKey);
          }
        } catch (error) {
          this.deps.log.warn({ err: (error as Error).message, holds: holds.length }, 'could not renew balance holds');
        }
      }),
    );
  }

  get activeHolds(): number {
    return this.holds.size;
  }

  /** Seeds the account (in the current epoch, past its re-assertion window) and the capped months from PostgreSQL. */
  private async seed(userId: string, months: SeedMonths, month: string): Promise<number[]> {
    const { keyId, memberId, ownerCapped } = months;
    const figures = await loadWalletFigures(this.deps.orm.em.fork(), userId, keyId, { memberId, ownerCapped });
    const epochKey = this.epochKey(userId);
    const seeding = await this.inEpoch(epochKey, (epoch) => this.scripts.walletSeedAccount(this.accountKey(userId), epochKey, String(IDLE_TTL_MS), epoch, ...accountSeedArgs(figures)));
    const spends = [
      ...(keyId !== null ? [`km:${keyId}`, `ks:${keyId}`, unitsText(figures.keySpent ?? 0)] : []),
      ...(memberId !== null ? [`mm:${memberId}`, `ms:${memberId}`, unitsText(figures.memberSpent ?? 0)] : []),
      ...(ownerCapped ? ['am', 'as', unitsText(figures.ownerSpent ?? 0)] : []),
    ];
    if (spends.length) await this.scripts.walletSeedMonths(this.accountKey(userId), String(IDLE_TTL_MS), month, ...spends);
    return seeding;
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    if (!this.deps.shared.healthy) throw unavailable();
    try {
      return await work();
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.deps.log.warn({ err: (error as Error).message }, 'shared wallet unavailable: refusing billable requests');
      throw unavailable();
    }
  }

  private settleLater(holdId: string, cost: Units, owner: HoldOwner, error: unknown): void {
    if (this.unsettled.length >= MAX_UNSETTLED) return this.missed(owner.userId, 'settle', error);
    this.unsettled.push({ holdId, cost, owner });
    if (this.unsettled.length > 1) return;
    // Once per backlog, not per settlement: a host cut from Redis misses every one.
    this.deps.log.warn({ err: (error as Error).message, userId: owner.userId }, 'shared wallet settlements missed: sent again when Redis is back');
    // A command that failed as the connection came back: Redis says ready before it is told why.
    setTimeout(() => this.deps.shared.healthy && void this.settleAgain(), 200).unref();
  }

  private async settleAgain(): Promise<void> {
    const pending = this.unsettled.splice(0);
    if (!pending.length) return;
    const sent = await Promise.all(
      pending.map(({ holdId, cost, owner }) =>
        this.finish(holdId, cost, owner).then(
          () => true,
          (error: unknown) => (this.settleLater(holdId, cost, owner, error), false),
        ),
      ),
    );
    this.deps.log.info({ settlements: sent.filter(Boolean).length, missedAgain: sent.filter((ok) => !ok).length }, 'missed settlements sent to the shared wallets');
  }

  private missed(userId: string, what: string, error: unknown): void {
    this.stale.add(userId);
    this.deps.log.warn({ err: (error as Error).message, userId, what }, 'shared wallet update missed: the account is reloaded from PostgreSQL when Redis is back');
  }

  /** Accounts whose cached balance missed a change are dropped, so their next use reseeds them from PostgreSQL. */
  private async dropStale(): Promise<void> {
    if (!this.stale.size) return;
    const users = [...this.stale];
    this.stale.clear();
    // Only the figures go: holds (this process's and others') and their sums stay, and the next use reseeds the figures.
    const dropped = await Promise.allSettled(users.map((userId) => this.deps.shared.command.hdel(this.accountKey(userId), 's', 'b', 'c', 'p')));
    dropped.forEach((result, i) => result.status === 'rejected' && this.stale.add(users[i]!));
  }

  /**
   * The epoch an account's scripts check: one per Redis, or on a cluster one per hash slot, named with a tag
   * of that slot so it lives beside the account's keys.
   */
  private epochKey(userId: string): string {
    if (!this.deps.shared.isCluster) return `${this.deps.shared.prefix}wallet-epoch`;
    return `${this.deps.shared.prefix}{${tagOfSlot(hashSlot(this.accountKey(userId)))}}wallet-epoch`;
  }

  /** What PostgreSQL's `wallet_epochs` remembers an epoch by: the prefix, and on a cluster the slot's epoch key. */
  private witnessName(epochKey: string): string {
    return this.deps.shared.isCluster ? epochKey : this.deps.shared.prefix;
  }

  private accountKey(userId: string): string {
    return `${this.deps.shared.prefix}{acct:${userId}}`;
  }

  /** The key's rate window; "no key" (a durable hold's owner) has a placeholder nobody counts against. */
  private windowKey(userId: string, keyId: string | null): string {
    return `${this.accountKey(userId)}:w:${keyId ?? '-'}`;
  }
}

/** A cap as the scripts take it: units, or '' for none. */
const capText = (cap: string | null | undefined): string => (cap == null ? '' : unitsText(cap));

/** The months a money script may find unseeded: the key's, a capped member's, the account's own when capped. */
interface SeedMonths {
  keyId: string | null;
  memberId: string | null;
  ownerCapped: boolean;
}

/** Past this many settlements waiting for Redis, an account's figures are dropped instead (seeded again from PostgreSQL). */
const MAX_UNSETTLED = 100_000;

/** What the limits of an admission are: the key's (with its overrides), its account's and the gateway's. */
export interface SlotLimits {
  windowMs: number;
  rpm: number;
  perKey: number;
  perAccount: number;
  global: number;
}

const NO_LIMITS: SlotLimits = { windowMs: 0, rpm: 0, perKey: 0, perAccount: 0, global: 0 };

/** Which limit refused an admission (ADMIT's codes 11-14). */
export type SlotRefusal = 'capacity' | 'key' | 'rate' | 'account';
const LIMIT_CODES: Record<number, SlotRefusal> = { 11: 'capacity', 12: 'key', 13: 'rate', 14: 'account' };

/** An admission: the hold, with the requests in the key's window counting it; or the limit that refused it. */
export type Admitted = { hold: WalletHold; counted: number; refused?: undefined } | { refused: SlotRefusal; counted: number; resetMs: number; freeInMs: number; hold?: undefined };

function unavailable(waitMs = 0): DomainError {
  return new DomainError('unavailable', 'Billing is temporarily unavailable; retry shortly', { retryAfterSeconds: Math.max(2, Math.ceil(waitMs / 1000)), reason: 'billing_unavailable' });
}
