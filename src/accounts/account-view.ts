import { formatUsd, money } from '../shared/money.js';
import type { User } from './user.entity.js';

/** An account as the cabinet shows it (the accounts and identity services, the admin CLI and the context's loader build it). */
export interface AccountView {
  userId: string;
  username: string | null;
  email: string | null;
  emailVerified: boolean;
  balanceUsd: string;
  isAdmin: boolean;
}

/** Paid plus bonus balance, as a USD string. */
export function balanceOf(user: Pick<User, 'balancePaidUsd' | 'balanceBonusUsd'>): string {
  return formatUsd(money(user.balancePaidUsd).plus(user.balanceBonusUsd));
}

export function toAccountView(user: User): AccountView {
  return {
    userId: user.id,
    username: user.username,
    email: user.email,
    emailVerified: user.emailVerified,
    balanceUsd: balanceOf(user),
    isAdmin: user.isAdmin,
  };
}

/** One row of an account's ledger as the cabinet lists it (a usage batch's debit is shown as the requests it covers). */
export interface TransactionView {
  id: string;
  userId: string;
  amountUsd: string;
  kind: string;
  apiKeyId: string | null;
  provider: string | null;
  model: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  createdAt: Date;
}

/** One account as an operator sees it in the cabinet: identity, balances, credit line, activity. */
export interface AdminAccountView {
  userId: string;
  username: string | null;
  email: string | null;
  emailVerified: boolean;
  isAdmin: boolean;
  balanceUsd: string;
  paidBalanceUsd: string;
  bonusBalanceUsd: string;
  creditLimitUsd: string;
  trustedPartnerUntil: Date | null;
  concurrencyLimit: number | null;
  activeKeys: number;
  activeSessions: number;
  createdAt: Date;
}
