import type { AccountsService } from './accounts.service.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import { formatUsd, money } from '../shared/money.js';
import type { WalletStore } from '../billing/wallets.js';

export interface KeyStatusView {
  keyId: string;
  userId: string;
  username: string | null;
  providerFamily: string;
  routeGroup: string;
  pricingPlan: string;
  monthlySpendCap: string | null;
  monthSpendUsd: string;
  balanceUsd: string;
  availableUsd: string;
  canSpend: boolean;
}

/** `GET /v1/me`: who a key is, what it may call, what it spent this month and whether it can spend now (from the admission wallets). */
export class KeyStatusService {
  constructor(private readonly deps: { catalog: CatalogService; accounts: AccountsService; wallets: WalletStore }) {}

  async of(principal: KeyPrincipal): Promise<KeyStatusView> {
    const { wallets } = this.deps;
    await wallets.warm(principal.userId, principal.keyId);
    const account = await this.deps.accounts.accountOf(principal.userId);
    const wallet = (await wallets.view(principal.userId, principal.keyId))!;
    const monthSpent = wallet.keyMonthSpent ?? money(0);
    const capLeft = principal.monthlySpendCap === null ? null : money(principal.monthlySpendCap).minus(monthSpent);
    return {
      keyId: principal.keyId,
      userId: principal.userId,
      username: account.username,
      providerFamily: principal.providerFamily,
      routeGroup: principal.routeGroup,
      pricingPlan: this.deps.catalog.snapshot.publicPlanName(principal.pricingPlan),
      monthlySpendCap: principal.monthlySpendCap,
      monthSpendUsd: formatUsd(monthSpent),
      balanceUsd: formatUsd(wallet.balance),
      availableUsd: formatUsd(wallet.available),
      canSpend: wallet.available.greaterThan(0) && (capLeft === null || capLeft.greaterThan(0)),
    };
  }
}
