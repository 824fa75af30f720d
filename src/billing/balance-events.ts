import type { MikroORM } from '@mikro-orm/postgresql';
import type { BalanceEvent } from '../events/account-event-hub.js';
import type { AppendedRow } from '../ledger/ledger.js';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import { formatUsd, money } from '../shared/money.js';
import type { WalletStore } from './wallets.js';
import { storedBalances } from './wallets.repository.js';

/** A balance event as a subscriber sees it: with what admission holds now and what is available. */
export interface BalanceView extends BalanceEvent {
  heldUsd: string;
  availableUsd: string;
}

/**
 * Balance events from committed ledger rows (a posting, a usage batch): one per row, with the account's paid
 * and bonus balances right after that row (the statement returns them after its last row; earlier rows of the
 * same statement are worked back from it).
 */
export class BalanceEvents {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      wallets: WalletStore;
      log: Logger;
      publish: (userId: string, event: BalanceEvent) => void;
      /** Whether anyone may hear the account's events (nothing is built for an account nobody hears). */
      audible: (userId: string) => boolean;
    },
  ) {}

  /** Announces committed rows (in the order they were appended); never throws (the money is already written). */
  announce(rows: readonly AppendedRow[]): void {
    try {
      for (const [userId, own] of byAccount(rows)) if (this.deps.audible(userId)) for (const event of eventsOf(own)) this.deps.publish(userId, event);
    } catch (error) {
      this.deps.log.error({ err: error }, 'could not announce balance changes');
    }
  }

  /** The account's balances now, as a subscription's first event. */
  async snapshot(userId: string): Promise<BalanceView> {
    const stored = await storedBalances(this.deps.orm.em.fork(), userId);
    if (!stored) throw new DomainError('not_found', 'No such account');
    const balance = money(stored.paid).plus(stored.bonus);
    return this.withHolds(userId, { kind: 'balance', paidUsd: formatUsd(stored.paid), bonusUsd: formatUsd(stored.bonus), balanceUsd: formatUsd(balance), transaction: null, at: new Date() });
  }

  /**
   * Adds what admission holds for the account now, and what it may spend: its wallet's figure (holds, the credit
   * line) when this process has the account loaded or wallets are shared (Redis), else the balance itself.
   * Never throws: an error in a running subscription would reach its client as an internal one.
   */
  async withHolds(userId: string, event: BalanceEvent): Promise<BalanceView> {
    // Shared wallets away (Redis): the ledger's figures still go out, without the holds.
    const wallet = await Promise.resolve(this.deps.wallets.view(userId, null)).catch(() => null);
    return { ...event, heldUsd: formatUsd(wallet?.held ?? 0), availableUsd: formatUsd(wallet?.available ?? event.balanceUsd) };
  }
}

function byAccount(rows: readonly AppendedRow[]): Map<string, AppendedRow[]> {
  const out = new Map<string, AppendedRow[]>();
  for (const row of rows) {
    const own = out.get(row.user_id);
    if (own) own.push(row);
    else out.set(row.user_id, [row]);
  }
  return out;
}

/** One account's rows of one statement, each with the balances right after it (worked back from the last). */
function eventsOf(rows: readonly AppendedRow[]): BalanceEvent[] {
  const last = rows[rows.length - 1]!;
  let paid = money(last.balance_paid_usd);
  let bonus = money(last.balance_bonus_usd);
  const at = new Date();
  const events: BalanceEvent[] = [];
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    events.unshift({
      kind: 'balance',
      paidUsd: formatUsd(paid),
      bonusUsd: formatUsd(bonus),
      balanceUsd: formatUsd(paid.plus(bonus)),
      transaction: { id: row.id, kind: row.kind, amountUsd: formatUsd(row.amount_usd), paidUsd: formatUsd(row.paid_usd), bonusUsd: formatUsd(row.bonus_usd), apiKeyId: row.api_key_id, createdAt: new Date(row.created_at) },
      at,
    });
    paid = paid.minus(row.paid_usd);
    bonus = bonus.minus(row.bonus_usd);
  }
  return events;
}
