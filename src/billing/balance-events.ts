import type { MikroORM } from '@mikro-orm/postgresql';
import type { BalanceEvent } from '../events/account-event-hub.js';
import type { AppendedRow } from '../ledger/ledger.js';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import { formatUsd, money } from '../shared/money.js';
import type { WalletStore } from './wallets.js';
import { storedBalances } from './wallets.repository.js';

/**
 * Balance events from committed ledger rows (a posting, a usage batch): one per row, with the account's paid
 * and bonus balances right after that row (the statement returns them after its last row; earlier rows of the
 * same statement are worked back from it), and held and available as admission sees them now.
 */
export class BalanceEvents {
  constructor(private readonly deps: { orm: MikroORM; wallets: WalletStore; log: Logger; publish: (userId: string, event: BalanceEvent) => void }) {}

  /** Announces committed rows (in the order they were appended); never throws (the money is already written). */
  announce(rows: readonly AppendedRow[]): void {
    if (!rows.length) return;
    void this.publishAll(rows).catch((error: unknown) => this.deps.log.error({ err: error }, 'could not announce balance changes'));
  }

  /** The account's balances now, as a subscription's first event. */
  async snapshot(userId: string): Promise<BalanceEvent> {
    const stored = await storedBalances(this.deps.orm.em.fork(), userId);
    if (!stored) throw new DomainError('not_found', 'No such account');
    return this.event(userId, stored.paid, stored.bonus, null);
  }

  private async publishAll(rows: readonly AppendedRow[]): Promise<void> {
    const byAccount = new Map<string, AppendedRow[]>();
    for (const row of rows) {
      const own = byAccount.get(row.user_id);
      if (own) own.push(row);
      else byAccount.set(row.user_id, [row]);
    }
    for (const [userId, own] of byAccount) {
      const last = own[own.length - 1]!;
      let paid = money(last.balance_paid_usd);
      let bonus = money(last.balance_bonus_usd);
      const events: BalanceEvent[] = [];
      for (let i = own.length - 1; i >= 0; i--) {
        const row = own[i]!;
        events.unshift(await this.event(userId, paid.toFixed(), bonus.toFixed(), row));
        paid = paid.minus(row.paid_usd);
        bonus = bonus.minus(row.bonus_usd);
      }
      for (const event of events) this.deps.publish(userId, event);
    }
  }

  private async event(userId: string, paid: string, bonus: string, row: AppendedRow | null): Promise<BalanceEvent> {
    const balance = money(paid).plus(bonus);
    const wallet = await this.deps.wallets.view(userId, null);
    return {
      kind: 'balance',
      paidUsd: formatUsd(paid),
      bonusUsd: formatUsd(bonus),
      balanceUsd: formatUsd(balance),
      heldUsd: formatUsd(wallet?.held ?? 0),
      // Admission's figure when this process has the account warm (it counts holds and the credit line), else the balance.
      availableUsd: formatUsd(wallet?.available ?? balance),
      transaction: row && {
        id: row.id,
        kind: row.kind,
        amountUsd: formatUsd(row.amount_usd),
        paidUsd: formatUsd(row.paid_usd),
        bonusUsd: formatUsd(row.bonus_usd),
        apiKeyId: row.api_key_id,
        createdAt: new Date(row.created_at),
      },
      at: new Date(),
    };
  }
}
