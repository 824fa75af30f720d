import { Decimal } from 'decimal.js';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { requireAdmin } from '../shared/actor.js';
import type { Actor } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { formatUsd, money, toUnits } from '../shared/money.js';
import { parseInput } from '../shared/validation.js';
import type { UsageKind } from '../ledger/kinds.js';
import { postOne, type AppendedRow, type Posted, type Posting } from '../ledger/ledger.js';
import type { WalletStore } from './wallets.js';
import { findHold, insertHold, markHoldSettled, releaseHold, expireHolds, type HoldView } from './holds.repository.js';
import { clearCreditLine, keySpendCaps, type KeyCaps, lockAccount, setCreditLine } from './wallets.repository.js';
import { adjustBalanceInput, trustedPartnerInput, userIdInput, type AdjustBalanceInput, type TrustedPartnerInput } from './billing.schemas.js';

/** How long a hold may outlive its request before it stops counting (and is swept). */
export const DEFAULT_HOLD_TTL_MS = 10 * 60_000;

export interface HoldRequest {
  userId: string;
  apiKeyId: string | null;
  /** The request (or video task phase) this hold covers; a retried hold with the same id is the same hold. */
  requestId: string;
  amountUsd: Decimal.Value;
  ttlMs?: number;
}

export type { HoldView } from './holds.repository.js';

export interface SettleRequest {
  requestId: string;
  userId: string;
  apiKeyId: string | null;
  costUsd: Decimal.Value;
  kind: UsageKind;
  /** The public provider family, never an upstream name. */
  provider: string | null;
  model: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
}

/** A posted ledger row; `applied` is false when it had been posted before (a replay): nothing changed. */
export type Settlement = Posted;

/** A ledger posting (src/ledger/ledger.ts) whose amount may be any decimal value. */
export interface PostRequest extends Omit<Posting, 'amountUsd'> {
  amountUsd: Decimal.Value;
}

export interface TrustedPartnerView {
  userId: string;
  trustedPartnerUntil: Date | null;
  creditLimitUsd: string;
}

/**
 * The ledger and the holds against it. Every ledger append is one PostgreSQL transaction that locks
 * the account row, so concurrent settlements of one account serialise and stay exact; the account's
 * stored balances move only together with an appended ledger row. Admission (is there room for this
 * hold?) is decided by the wallet store (`Wallets` in memory, `SharedWallets` in Redis), which every committed change here keeps current.
 */
export class BillingService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      log: Logger;
      wallets: WalletStore;
      /** Told of every ledger row once its transaction committed (balance events, src/billing/balance-events.ts). */
      announce?: (rows: AppendedRow[]) => void;
    },
  ) {}

  private em(): EntityManager {
    return this.deps.orm.em.fork();
  }

  private async lockUser(tx: EntityManager, userId: string): Promise<void> {
    if (!(await lockAccount(tx, userId))) throw new DomainError('not_found', 'No such account');
  }

  /**
   * A durable hold (it survives restarts; video tasks use it): reserved in the in-memory wallet, which
   * admits atomically against balance, credit line, other holds and the key's monthly cap, then
   * written down. 402 when it does not fit.
   */
  async hold(request: HoldRequest): Promise<HoldView> {
    const amount = money(request.amountUsd);
    if (amount.isNegative()) throw new Error('a hold cannot be negative');
    const em = this.em();
    const existing = await findHold(em, request.requestId);
    if (existing) return existing;

    let caps: KeyCaps = { keyCap: null, memberId: null, memberCap: null, ownerCap: null };
    if (request.apiKeyId) {
      const found = await keySpendCaps(em, request.apiKeyId, request.userId);
      if (found === undefined) throw new DomainError('not_found', 'No such key');
      caps = found;
    }
    const { wallets } = this.deps;
    await wallets.warm(request.userId, request.apiKeyId, caps.memberId, caps.ownerCap !== null);
    const fresh = !wallets.has(request.requestId);
    const ttlMs = request.ttlMs ?? DEFAULT_HOLD_TTL_MS;
    await wallets.reserve({
      id: request.requestId,
      userId: request.userId,
      keyId: request.apiKeyId,
      monthlySpendCap: caps.keyCap,
      memberId: caps.memberId,
      memberMonthlyCap: caps.memberCap,
      ownerMonthlyCap: caps.ownerCap,
      amount: toUnits(amount),
      ttlMs,
    });
    try {
      const inserted = await insertHold(em, { userId: request.userId, apiKeyId: request.apiKeyId, requestId: request.requestId, amountUsd: amount.toFixed(), ttlMs });
      // A concurrent hold of the same request won the insert: it is the same hold.
      return inserted ?? (await findHold(em, request.requestId))!;
    } catch (error) {
      if (fresh) wallets.release(request.requestId);
      throw error;
    }
  }

  /**
   * Posts the real cost of a request and closes its hold. Idempotent per request id: a replay posts
   * nothing and returns the first settlement.
   */
  async settle(request: SettleRequest): Promise<Settlement> {
    const cost = money(request.costUsd);
    if (cost.isNegative()) throw new Error('a cost cannot be negative');
    const { settlement, hold } = await this.em().transactional(async (tx) => {
      await this.lockUser(tx, request.userId);
      const hold = await findHold(tx, request.requestId, true);
      if (hold && hold.status === 'active' && cost.greaterThan(hold.amountUsd)) {
        this.deps.log.warn({ requestId: request.requestId, hold: hold.amountUsd, cost: cost.toFixed() }, 'settlement exceeds its hold');
      }
      const settlement = await this.postLocked(tx, {
        userId: request.userId,
        amountUsd: cost.negated(),
        kind: request.kind,
        idempotencyKey: `${request.kind}:${request.requestId}`,
        apiKeyId: request.apiKeyId,
        provider: request.provider,
        model: request.model,
        promptTokens: request.promptTokens,
        completionTokens: request.completionTokens,
      });
      if (hold && hold.status === 'active') {
        await markHoldSettled(tx, hold.id);
      }
      return { settlement, hold };
    });
    const owner = { userId: request.userId, keyId: request.apiKeyId, durableAmount: hold?.status === 'active' ? hold.amountUsd : undefined };
    if (settlement.applied) this.deps.wallets.settle(request.requestId, toUnits(cost), owner);
    else this.deps.wallets.release(request.requestId, owner);
    this.announce([settlement]);
    return settlement;
  }

  /** Releases a hold without charging (failed request). Returns whether an active hold was released. */
  async release(requestId: string): Promise<boolean> {
    const released = await releaseHold(this.em(), requestId);
    if (!released) return false;
    this.deps.wallets.release(requestId, { userId: released.userId, keyId: released.apiKeyId, durableAmount: released.amountUsd });
    return true;
  }

  /** Marks holds past their expiry as expired (they already stopped counting); returns how many. */
  async expireHolds(): Promise<number> {
    const count = (await expireHolds(this.em())) + this.deps.wallets.sweep();
    if (count > 0) this.deps.log.warn({ count }, 'expired holds released');
    return count;
  }

  /** Appends one ledger row (idempotent on its key) and moves the cached balances with it. */
  async post(request: PostRequest): Promise<Settlement> {
    const settlement = await this.em().transactional(async (tx) => {
      await this.lockUser(tx, request.userId);
      return this.postLocked(tx, request);
    });
    if (settlement.applied) this.deps.wallets.credit(request.userId, settlement.amountUsd);
    this.announce([settlement]);
    return settlement;
  }

  /** Announces the rows these postings appended (replays appended none), after their commit. */
  private announce(settlements: readonly Settlement[]): void {
    const rows = settlements.flatMap((settlement) => (settlement.appended ? [settlement.appended] : []));
    if (rows.length) this.deps.announce?.(rows);
  }

  /**
   * Runs `work` in one transaction that holds the account row lock; `post` inside it appends ledger
   * rows (idempotent on their keys) in the same transaction, so other writes of `work` (an invoice
   * moving to paid, a bonus grant) commit or roll back together with them. Cached balances move after
   * the commit.
   */
  async withAccount<T>(userId: string, work: (tx: EntityManager, post: (request: PostRequest) => Promise<Settlement>) => Promise<T>): Promise<T> {
    let applied: Settlement[] = [];
    const result = await this.em().transactional(async (tx) => {
      applied = [];
      await this.lockUser(tx, userId);
      return work(tx, async (request) => {
        if (request.userId !== userId) throw new Error('withAccount: a post for another account');
        const settlement = await this.postLocked(tx, request);
        if (settlement.applied) applied.push(settlement);
        return settlement;
      });
    });
    for (const settlement of applied) this.deps.wallets.credit(userId, settlement.amountUsd);
    this.announce(applied);
    return result;
  }

  /** As `post`, inside a transaction that already holds the account row lock; the ledger module writes it. */
  private postLocked(tx: EntityManager, request: PostRequest): Promise<Settlement> {
    return postOne(tx, { ...request, amountUsd: money(request.amountUsd).toFixed() });
  }

  /** Admin: credits or debits an account with a reason, recorded in the ledger. */
  async adjustBalance(actor: Actor, raw: AdjustBalanceInput): Promise<Settlement> {
    requireAdmin(actor);
    const input = parseInput(adjustBalanceInput, raw);
    const settlement = await this.post({
      userId: input.userId,
      amountUsd: input.amountUsd,
      kind: 'adjustment',
      bucket: 'paid',
      idempotencyKey: `adjustment:${input.idempotencyKey ?? newId()}`,
      note: `${input.reason} (by ${actor.userId})`,
    });
    this.deps.log.info({ admin: actor.userId, userId: input.userId, amountUsd: settlement.amountUsd, applied: settlement.applied }, 'balance adjusted');
    return settlement;
  }

  /** Admin: grants (or extends) trusted-partner status: spending below zero down to the credit limit until `validUntil`. */
  async setTrustedPartner(actor: Actor, raw: TrustedPartnerInput): Promise<TrustedPartnerView> {
    requireAdmin(actor);
    const input = parseInput(trustedPartnerInput, raw);
    const line = await setCreditLine(this.em(), input.userId, input.validUntil, input.creditLimitUsd);
    if (!line) throw new DomainError('not_found', 'No such account');
    this.deps.wallets.setCreditLine(line.userId, line.until, line.limitUsd);
    return { userId: line.userId, trustedPartnerUntil: line.until, creditLimitUsd: formatUsd(line.limitUsd) };
  }

  async revokeTrustedPartner(actor: Actor, userId: string): Promise<TrustedPartnerView> {
    requireAdmin(actor);
    const input = parseInput(userIdInput, { userId });
    const id = await clearCreditLine(this.em(), input.userId);
    if (!id) throw new DomainError('not_found', 'No such account');
    this.deps.wallets.setCreditLine(id, null, 0);
    return { userId: id, trustedPartnerUntil: null, creditLimitUsd: '0' };
  }
}
