import { randomUUID } from 'node:crypto';
import type { SharedWallets, SlotRefusal } from '../billing/shared-wallets.js';
import type { ReserveRequest, WalletHold } from '../billing/wallets.js';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import type { SharedState } from '../shared/redis.js';
import {
  accountConcurrencyLimited,
  capacityLimited,
  concurrencyLimited,
  DEFAULT_LIMITS,
  Limiter,
  limitsOf,
  rateLimited,
  type LimitBaselines,
  type LimitSubject,
  type RequestLimiter,
  type RequestWindow,
  type Slot,
  slotFreedBy,
} from './limits.js';

/**
 * KEYS: the gateway's members. ARGV: this process's id, lease ms, the global limit. Renews this process's
 * membership, drops members that stopped renewing, and answers this process's share of the global limit: an
 * equal part, the remainder going to the first members by id, so the shares add up to the limit.
 */
const SHARE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(members)
local global, n = tonumber(ARGV[3]), #members
local share = math.floor(global / n)
for i, id in ipairs(members) do
  if id == ARGV[1] and i <= global % n then share = share + 1 end
end
return share
`;

export interface SharedLimiterOptions {
  baselines?: LimitBaselines;
  /** How long a slot outlives the process holding it; renewed every third of it while the request runs. */
  leaseMs: number;
}

/**
 * Request limits shared by every gateway process through Redis. A request's concurrency slot is its balance hold
 * (src/billing/shared-wallets.ts): `holdAndAcquire` checks the money and the limits in one script, and the hold's
 * settlement frees the slot. While Redis is away each process falls back to its own `Limiter` for what holds no
 * money (billable requests are refused then), and returns to the shared limits as soon as Redis answers again.
 *
 * The gateway's global limit: on one Redis, one set of every process's slots, checked in the same script (exact,
 * wherever the requests land). On a Redis Cluster no key can sit beside every account's, so each process admits
 * up to a share of the limit, and the shares add up to it (a process that joins or leaves moves them within a
 * second): a process refuses at its share while another has room, so there the limit binds exactly when the load
 * balancer spreads requests evenly.
 */
export class SharedLimiter implements RequestLimiter {
  private readonly baselines: LimitBaselines;
  private readonly local: Limiter;
  /** Slots this process holds in Redis. */
  private sharedCount = 0;
  private localCount = 0;
  /** On a cluster: this process's share of the global limit, renewed with its membership (null until Redis says). */
  private share: number | null = null;
  private readonly memberId = randomUUID();
  private readonly shareTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly shared: SharedState,
    private readonly wallets: SharedWallets,
    private readonly log: Logger,
    private readonly options: SharedLimiterOptions,
  ) {
    this.baselines = options.baselines ?? DEFAULT_LIMITS;
    this.local = new Limiter(this.baselines);
    if (shared.isCluster) {
      shared.command.defineCommand('baikalShare', { numberOfKeys: 1, lua: SHARE });
      this.shareTimer = setInterval(() => void this.renewShare(), Math.min(1_000, Math.floor(options.leaseMs / 3))).unref();
      void this.renewShare();
    }
  }

  get inFlightTotal(): number {
    return this.sharedCount + this.localCount;
  }

  /** A slot alone (no money: a forwarded token count). */
  async acquire(subject: LimitSubject): Promise<Slot> {
    if (!this.shared.healthy) return this.acquireLocally(subject);
    const id = randomUUID();
    const owner = { userId: subject.userId, keyId: subject.keyId };
    let window: RequestWindow;
    try {
      ({ window } = await this.admit({ id, ...owner, monthlySpendCap: null, amount: 0n }, subject, 's'));
    } catch (error) {
      if (error instanceof DomainError && error.reason !== 'billing_unavailable') throw error;
      return this.acquireLocally(subject);
    }
    return this.slotOf(window, () => this.wallets.release(id, owner));
  }

  /** The request's hold and its slot in one script; settling or releasing the hold frees the slot. */
  async holdAndAcquire(request: ReserveRequest, subject: LimitSubject): Promise<{ hold: WalletHold; slot: Slot }> {
    const { hold, window } = await this.admit(request, subject, 'r');
    return { hold, slot: this.slotOf(window, () => {}) };
  }

  async peek(subject: LimitSubject): Promise<RequestWindow> {
    if (!this.shared.healthy) return this.local.peek(subject);
    const { rpm } = limitsOf(this.baselines, subject);
    const [counted = 0, resetMs = 0] = await this.wallets.peek(subject.userId, subject.keyId, this.baselines.windowMs);
    return { limit: rpm, remaining: Math.max(0, rpm - counted), resetMs };
  }

  close(): void {
    if (this.shareTimer) clearInterval(this.shareTimer);
  }

  private async admit(request: ReserveRequest, subject: LimitSubject, kind: 'r' | 's'): Promise<{ hold: WalletHold; window: RequestWindow }> {
    const { rpm, concurrency, accountConcurrency } = limitsOf(this.baselines, subject);
    const { windowMs } = this.baselines;
    const admitted = await this.wallets.admit(request, kind, { windowMs, rpm, perKey: concurrency, perAccount: accountConcurrency, global: this.baselines.concurrentGlobal });
    const seen = { limit: rpm, remaining: Math.max(0, rpm - admitted.counted), resetMs: admitted.refused ? admitted.resetMs : windowMs };
    if (admitted.refused) throw refusalOf(admitted.refused, seen, { rpm, concurrency, accountConcurrency, windowMs }, admitted.freeInMs);
    // On a cluster the global limit is this process's share, judged after the money and the account's limits (as
    // one Redis judges its set of slots), so a request the balance refuses is told so.
    if (this.shared.isCluster && this.sharedCount >= (this.share ?? (await this.renewShare()))) {
      this.wallets.release(admitted.hold.id, { userId: request.userId, keyId: request.keyId });
      throw capacityLimited(seen);
    }
    this.sharedCount += 1;
    // This request is the window's newest: it is empty a window from now.
    return { hold: admitted.hold, window: seen };
  }

  /** A slot counted in `sharedCount` by `admit`. */
  private slotOf(window: RequestWindow, free: () => void): Slot {
    return slotFreedBy(() => {
      this.sharedCount -= 1;
      free();
    }, window);
  }

  private acquireLocally(subject: LimitSubject): Slot {
    const slot = this.local.acquire(subject);
    this.localCount += 1;
    return slotFreedBy(() => {
      this.localCount -= 1;
      slot.release();
    }, slot.window);
  }

  /** Renews this process's membership and answers its share (the whole limit while Redis cannot say). */
  private async renewShare(): Promise<number> {
    try {
      const command = this.shared.command as unknown as { baikalShare(key: string, id: string, leaseMs: number, global: number): Promise<number> };
      this.share = await command.baikalShare(`${this.shared.prefix}{gateways}:members`, this.memberId, this.options.leaseMs, this.baselines.concurrentGlobal);
    } catch (error) {
      this.log.warn({ err: (error as Error).message }, 'could not renew this process’s share of the global concurrency limit');
    }
    return this.share ?? this.baselines.concurrentGlobal;
  }
}

function refusalOf(refused: SlotRefusal, seen: RequestWindow, limits: { rpm: number; concurrency: number; accountConcurrency: number; windowMs: number }, freeInMs: number): DomainError {
  if (refused === 'capacity') return capacityLimited(seen);
  if (refused === 'key') return concurrencyLimited(limits.concurrency, seen);
  if (refused === 'account') return accountConcurrencyLimited(limits.accountConcurrency, seen);
  return rateLimited(limits.rpm, freeInMs, seen, limits.windowMs);
}
