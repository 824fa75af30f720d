import { formatUsd, money } from '../shared/money.js';
import { otherChanges, type StatementKey, type StatementMember, type StatementModel, type StatementView } from './organization-statement.js';
import type { KeyRow, LedgerMonthRow, StatementSpendRow } from './organization-usage.repository.js';

/** The invoice columns a statement shows. */
export interface StatementInvoiceRow {
  id: string;
  usd_credit: string;
  bonus_usd: string;
  currency: string;
  amount_requested: string;
  status: string;
  created_at: Date | string;
  paid_at: Date | string | null;
}

export interface StatementRows {
  organizationId: string;
  month: string;
  from: Date;
  to: Date;
  ledger: LedgerMonthRow;
  invoices: StatementInvoiceRow[];
  spend: StatementSpendRow[];
  keys: KeyRow[];
  members: { user_id: string; name: string }[];
}

const bySpend = <T extends { spend: string }>(a: T, b: T) => money(b.spend).comparedTo(a.spend);

/**
 * The statement from its rows. Spend by key and by model is what the month's ledger debits cover (their events),
 * so each list sums to `totalSpend`; by member is by key, through the member who made each key. Every current
 * member is listed (at zero when they spent nothing); a former member who spent this month is listed too.
 */
export function buildStatement(rows: StatementRows): StatementView {
  const keyOf = new Map(rows.keys.map((k) => [k.id, k]));
  const byKey: StatementKey[] = rows.spend
    .filter((r) => r.by_key)
    .map((r) => {
      const key = r.api_key_id ? keyOf.get(r.api_key_id) : undefined;
      return { apiKeyId: r.api_key_id, label: key?.label ?? null, memberName: key?.member_name ?? null, spend: formatUsd(r.spend), requests: Number(r.requests) };
    })
    .sort(bySpend);
  const byModel: StatementModel[] = rows.spend
    .filter((r) => !r.by_key)
    .map((r) => ({ model: r.model ?? '', spend: formatUsd(r.spend), requests: Number(r.requests) }))
    .sort(bySpend);
  return {
    organizationId: rows.organizationId,
    organizationName: rows.ledger.name,
    month: rows.month,
    from: rows.from,
    to: rows.to,
    openingBalance: formatUsd(rows.ledger.opening),
    closingBalance: formatUsd(rows.ledger.closing),
    invoicesCredited: formatUsd(rows.ledger.credited),
    totalSpend: formatUsd(rows.ledger.spend),
    otherChanges: otherChanges(rows.ledger.opening, rows.ledger.closing, rows.ledger.credited, rows.ledger.spend),
    invoices: rows.invoices.map((i) => ({
      id: i.id,
      amount: formatUsd(i.usd_credit),
      bonus: formatUsd(i.bonus_usd),
      currency: i.currency,
      amountRequested: formatUsd(i.amount_requested),
      status: i.status,
      createdAt: new Date(i.created_at),
      paidAt: i.paid_at ? new Date(i.paid_at) : null,
    })),
    byMember: membersOf(rows, keyOf),
    byModel,
    byKey,
  };
}

function membersOf(rows: StatementRows, keyOf: Map<string, KeyRow>): StatementMember[] {
  const members = new Map<string, { name: string; spend: ReturnType<typeof money>; requests: number }>();
  for (const m of rows.members) members.set(m.user_id, { name: m.name, spend: money(0), requests: 0 });
  for (const r of rows.spend) {
    const key = r.by_key && r.api_key_id ? keyOf.get(r.api_key_id) : undefined;
    if (!key?.member_id) continue;
    const member = members.get(key.member_id) ?? { name: key.member_name ?? key.member_id, spend: money(0), requests: 0 };
    members.set(key.member_id, { name: member.name, spend: member.spend.plus(r.spend), requests: member.requests + Number(r.requests) });
  }
  return [...members].map(([userId, m]) => ({ userId, name: m.name, spend: formatUsd(m.spend), requests: m.requests })).sort(bySpend);
}
