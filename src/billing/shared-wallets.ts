import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import type { Units } from '../shared/money.js';
import type { SharedState } from '../shared/redis.js';
import { accountSeedFields, defineWalletScripts, fromUnits, IDLE_TTL_MS, unitsText, type WalletScripts } from './shared-wallet-scripts.js';
import { monthOf, WALLET_HOLD_TTL_MS, type HoldOwner, type ReserveRequest, type WalletHold, type WalletStore, type WalletView } from './wallets.js';
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
 */
export class SharedWallets implements WalletStore {
  /** Holds this process made and has not closed yet (for `has` and the shutdown check). */
  private readonly holds = new Map<string, WalletHold>();
  /** Accounts whose cached figures missed an update while Redis was away: dropped once it is back. */
  private readonly stale = new Set<string>();
  /** Request holds (not durable ones) live on a lease this process renews, like concurrency slots. */
  private readonly leased = new Set<string>();
  /** The wallet epoch this process joined (null: not yet, or Redis lost it). */
  private epoch: string | null = null;
  private joining: Promise<void> | null = null;
  private readonly renewTimer: NodeJS.Timeout;
  private readonly scripts: WalletScripts;

  constructor(
    private readonly deps: { orm: MikroORM; shared: SharedState; log: Logger; leaseMs: number },
    private readonly now: () => number = Date.now,
  ) {
    this.scripts = defineWalletScripts(deps.shared.command);
    deps.shared.command.on('ready', () => void this.dropStale());
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

  async reserve(request: ReserveRequest): Promise<WalletHold> {
    const existing = this.holds.get(request.id);
    if (existing) return existing;
    const amount = request.amount;
    if (amount < 0n) throw new Error('a hold cannot be negative');
    // A request's hold is leased (a crashed process's holds free within one lease); a durable hold has its own expiry.
    const leased = request.ttlMs === undefined;
    const ttlMs = request.ttlMs ?? this.deps.leaseMs;
    const month = monthOf(this.now());
    const args = [request.id, unitsText(amount), request.keyId ?? '', request.monthlySpendCap === null ? '' : unitsText(request.monthlySpendCap), String(ttlMs), month, String(IDLE_TTL_MS)];
    const [verdict, waitMs] = await this.call((scripts) =>
      this.withEpoch(request.userId, request.keyId, month, (epoch) => scripts.walletReserve(this.accountKey(request.userId), this.keySpendKey(request.keyId), this.epochKey, ...args, epoch)),
    );
    if (verdict === 1) throw new DomainError('insufficient_balance', 'Insufficient balance for this request; top up to continue');
    if (verdict === 2) throw new DomainError('spend_cap_reached', "This key's monthly spend cap is reached");
    if (verdict !== 0) throw unavailable(waitMs);
    const hold: WalletHold = { id: request.id, userId: request.userId, keyId: request.keyId, amount, expiresAt: this.now() + (leased ? WALLET_HOLD_TTL_MS : ttlMs) };
    this.holds.set(hold.id, hold);
    if (leased) this.leased.add(hold.id);
    return hold;
  }

  settle(holdId: string, cost: Units, owner: HoldOwner): void {
    this.holds.delete(holdId);
    this.leased.delete(holdId);
    // The ledger row is written by the batch writer regardless; a missed cache update marks the account stale.
    this.scripts
      .walletSettle(this.accountKey(owner.userId), this.keySpendKey(owner.keyId), holdId, unitsText(cost), monthOf(this.now()))
      .catch((error: unknown) => this.missed(owner.userId, 'settle', error));
  }

  release(holdId: string, owner?: HoldOwner): boolean {
    const hold = this.holds.get(holdId);
    this.holds.delete(holdId);
    this.leased.delete(holdId);
    const userId = hold?.userId ?? owner?.userId;
    if (!userId) return false;
    // Otherwise it expires in Redis by itself.
    this.scripts.walletSettle(this.accountKey(userId), this.keySpendKey(hold?.keyId ?? owner?.keyId ?? null), holdId, '0', '').catch(() => {});
    return hold !== undefined || owner?.durableAmount !== undefined;
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
    const result = await this.call((scripts) => this.withEpoch(userId, keyId, month, (epoch) => scripts.walletView(this.accountKey(userId), this.keySpendKey(keyId), this.epochKey, keyId ?? '', month, epoch)));
    if (result.length < 5) throw unavailable(Number(result[1] ?? 0));
    const [balance, credit, held, , spent] = result.map((units) => fromUnits(units));
    return { balance: balance!, held: held!, available: balance!.plus(credit!).minus(held!), keyMonthSpent: keyId === null ? null : spent! };
  }

  /** Holds expire inside Redis; here only this process's bookkeeping of them. */
  sweep(): number {
    const now = this.now();
    let expired = 0;
    for (const [id, hold] of this.holds) if (hold.expiresAt <= now) (this.holds.delete(id), this.leased.delete(id), (expired += 1));
    return expired;
  }

  /**
   * Runs a money script in the current epoch: joins it first when this process has not (or Redis lost
   * the old one), seeds what the script found missing, and answers the script's last verdict.
   */
  private async withEpoch<T extends (number | string)[]>(userId: string, keyId: string | null, month: string, run: (epoch: string) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.epoch === null) await this.join();
      const result = await run(this.epoch!);
      const verdict = Number(result[0]);
      if (attempt === 3) return result;
      if (verdict === -3) this.epoch = null;
      else if (verdict === -1 || verdict === -2) await this.seed(userId, keyId, month);
      else return result;
    }
  }

  /** Joins the current epoch (starting one if Redis has none), re-asserting every hold this process has in flight. */
  private join(): Promise<void> {
    this.joining ??= (async () => {
      const started = await this.startEpoch();
      await this.reassert(started);
    })().finally(() => (this.joining = null));
    return this.joining;
  }

  private async startEpoch(): Promise<string> {
    const existing = await this.deps.shared.command.get(this.epochKey);
    if (existing) return existing;
    // Redis has no epoch: a first start, or it lost its data. PostgreSQL remembers whether one existed,
    // and only then must admissions wait one lease for every live process to re-assert its holds.
    const lost = await this.witnessedEpoch();
    const epoch = await this.scripts.walletJoinEpoch(this.epochKey, randomUUID(), String(lost ? this.deps.leaseMs : 0));
    await this.witnessEpoch(epoch);
    if (lost) this.deps.log.warn({ epoch, waitMs: this.deps.leaseMs }, 'Redis lost the shared wallets: a new epoch starts; billable requests wait one lease while every process re-asserts its holds');
    return epoch;
  }

  /** Puts this process's in-flight holds back into the epoch (into account hashes seeded or not), then adopts it. */
  private async reassert(epoch: string): Promise<void> {
    const holds = [...this.leased].map((id) => this.holds.get(id)).filter((hold): hold is WalletHold => hold !== undefined);
    if (holds.length) {
      const verdict = await this.renewScript(epoch, holds);
      if (verdict === -3) throw new Error('the wallet epoch changed while holds were re-asserted');
      this.deps.log.info({ holds: holds.length, epoch }, 'in-flight holds re-asserted into the shared wallets');
    }
    this.epoch = epoch;
  }

  private renewScript(epoch: string, holds: WalletHold[]): Promise<number> {
    return this.scripts.walletRenew(
      holds.length + 1,
      this.epochKey,
      ...holds.map((hold) => this.accountKey(hold.userId)),
      this.deps.leaseMs,
      IDLE_TTL_MS,
      epoch,
      ...holds.flatMap((hold) => [hold.id, unitsText(hold.amount), hold.keyId ?? '']),
    );
  }

  private async renew(): Promise<void> {
    if (!this.leased.size || !this.deps.shared.healthy || this.joining) return;
    // Taken and sent without a pause: on one connection, a settlement sent before it is applied before it.
    const holds = [...this.leased].map((id) => this.holds.get(id)).filter((hold): hold is WalletHold => hold !== undefined);
    try {
      if (this.epoch === null || (await this.renewScript(this.epoch, holds)) === -3) {
        this.epoch = null;
        await this.join();
      }
    } catch (error) {
      this.deps.log.warn({ err: (error as Error).message, holds: holds.length }, 'could not renew balance holds');
    }
  }

  /** Whether PostgreSQL recorded a wallet epoch for this Redis prefix (Redis had state to lose). */
  private async witnessedEpoch(): Promise<boolean> {
    return epochWitnessed(this.deps.orm.em.fork(), this.deps.shared.prefix);
  }

  private async witnessEpoch(epoch: string): Promise<void> {
    await witnessEpoch(this.deps.orm.em.fork(), this.deps.shared.prefix, epoch);
  }

  get activeHolds(): number {
    return this.holds.size;
  }

  private async seed(userId: string, keyId: string | null, month: string): Promise<void> {
    const figures = await loadWalletFigures(this.deps.orm.em.fork(), userId, keyId);
    await this.scripts.walletSeedAccount(this.accountKey(userId), String(IDLE_TTL_MS), ...accountSeedFields(figures));
    if (keyId !== null) await this.scripts.walletSeedKey(this.keySpendKey(keyId), month, unitsText(figures.keySpent ?? 0), String(IDLE_TTL_MS));
  }

  private async call<T>(work: (scripts: WalletScripts) => Promise<T>): Promise<T> {
    if (!this.deps.shared.healthy) throw unavailable();
    try {
      return await work(this.scripts);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.deps.log.warn({ err: (error as Error).message }, 'shared wallet unavailable: refusing billable requests');
      throw unavailable();
    }
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
    // Only the figures go: holds (this process's and others') stay, and the next use reseeds the figures.
    const pipeline = this.deps.shared.command.multi();
    for (const userId of users) pipeline.hdel(this.accountKey(userId), 's', 'b', 'c', 'p');
    await pipeline.exec().catch(() => users.forEach((u) => this.stale.add(u)));
  }

  private get epochKey(): string {
    return `${this.deps.shared.prefix}wallet-epoch`;
  }

  private accountKey(userId: string): string {
    return `${this.deps.shared.prefix}wallet:${userId}`;
  }

  /** A fixed placeholder for "no key" keeps the scripts' key count constant. */
  private keySpendKey(keyId: string | null): string {
    return `${this.deps.shared.prefix}keyspend:${keyId ?? '-'}`;
  }
}

function unavailable(waitMs = 0): DomainError {
  return new DomainError('unavailable', 'Billing is temporarily unavailable; retry shortly', { retryAfterSeconds: Math.max(2, Math.ceil(waitMs / 1000)), reason: 'billing_unavailable' });
}
