import { createHash } from 'node:crypto';
import { formatUsd, money } from '../shared/money.js';

/**
 * An organization's monthly statement (issue 56) and its two printable forms: CSV and a self-contained HTML page
 * in Russian or English. The figures come from OrganizationUsageService; here they are only laid out.
 */

export const STATEMENT_LANGUAGES = ['ru', 'en'] as const;
export type StatementLanguage = (typeof STATEMENT_LANGUAGES)[number];

export interface StatementInvoice {
  id: string;
  /** The USD the invoice credits as paid balance. */
  amount: string;
  bonus: string;
  currency: string;
  amountRequested: string;
  status: string;
  createdAt: Date;
  paidAt: Date | null;
}

export interface StatementMember {
  userId: string;
  name: string;
  spend: string;
  requests: number;
}

export interface StatementModel {
  model: string;
  spend: string;
  requests: number;
}

export interface StatementKey {
  apiKeyId: string | null;
  label: string | null;
  memberName: string | null;
  spend: string;
  requests: number;
}

export interface StatementView {
  organizationId: string;
  organizationName: string;
  /** `YYYY-MM`, a UTC month: [from, to). */
  month: string;
  from: Date;
  to: Date;
  /** The ledger's balance (paid and bonus) before the month began, and before the next one. */
  openingBalance: string;
  closingBalance: string;
  /** What the month's invoices credited (paid and bonus), by the ledger's rows. */
  invoicesCredited: string;
  /** What usage spent (the ledger's usage and video rows). */
  totalSpend: string;
  /** Everything else the ledger moved (an operator's adjustments, expired bonus): closing = opening + credited - spend + other. */
  otherChanges: string;
  invoices: StatementInvoice[];
  byMember: StatementMember[];
  byModel: StatementModel[];
  byKey: StatementKey[];
}

/** `closing - opening - credited + spend`: what neither invoices nor usage explain. */
export function otherChanges(opening: string, closing: string, credited: string, spend: string): string {
  return formatUsd(money(closing).minus(opening).minus(credited).plus(spend));
}

const TEXT = {
  en: {
    title: 'Statement', month: 'Month', opening: 'Opening balance', credited: 'Paid by invoices', spend: 'Usage', other: 'Other changes', closing: 'Closing balance',
    invoices: 'Invoices', invoice: 'Invoice', amount: 'Credit, USD', bonus: 'Bonus, USD', requested: 'Amount', status: 'Status', created: 'Created', paid: 'Paid',
    byMember: 'Spend by member', member: 'Member', byModel: 'Spend by model', model: 'Model', byKey: 'Spend by key', key: 'Key', spendUsd: 'Spend, USD', requests: 'Requests',
    none: 'None', noKey: '(no key)', generated: 'Amounts in USD; the month is a UTC calendar month.',
  },
  ru: {
    title: 'Выписка', month: 'Месяц', opening: 'Баланс на начало', credited: 'Оплачено по счетам', spend: 'Расход', other: 'Прочие изменения', closing: 'Баланс на конец',
    invoices: 'Счета', invoice: 'Счёт', amount: 'Зачислено, USD', bonus: 'Бонус, USD', requested: 'Сумма', status: 'Статус', created: 'Создан', paid: 'Оплачен',
    byMember: 'Расход по участникам', member: 'Участник', byModel: 'Расход по моделям', model: 'Модель', byKey: 'Расход по ключам', key: 'Ключ', spendUsd: 'Расход, USD', requests: 'Запросов',
    none: 'Нет', noKey: '(без ключа)', generated: 'Суммы в USD; месяц — календарный месяц по UTC.',
  },
} as const satisfies Record<StatementLanguage, Record<string, string>>;

/** The page's language: `lang` when it names one, else the first of Accept-Language's that does, else Russian (the cabinet's default). */
export function statementLanguage(lang: unknown, acceptLanguage: string | undefined): StatementLanguage {
  if (typeof lang === 'string' && (STATEMENT_LANGUAGES as readonly string[]).includes(lang.toLowerCase())) return lang.toLowerCase() as StatementLanguage;
  for (const part of (acceptLanguage ?? '').split(',')) {
    const tag = part.split(';')[0]!.trim().slice(0, 2).toLowerCase();
    if ((STATEMENT_LANGUAGES as readonly string[]).includes(tag)) return tag as StatementLanguage;
  }
  return 'ru';
}

/** A CSV cell: quoted when needed, and a leading =, +, - or @ of text defused (it would run as a spreadsheet formula). */
export function csvCell(value: unknown): string {
  const text = value == null ? '' : value instanceof Date ? value.toISOString() : String(value);
  const safe = /^[=+\-@]/.test(text) && !/^-?\d/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvLines(rows: unknown[][]): string {
  return `${rows.map((row) => row.map(csvCell).join(',')).join('\r\n')}\r\n`;
}

/** One table of rows: `section` says which part of the statement a row belongs to. */
export function statementCsv(s: StatementView): string {
  const rows: unknown[][] = [['section', 'id', 'name', 'member', 'amount_usd', 'bonus_usd', 'requests', 'status', 'created_at', 'paid_at']];
  const figure = (id: string, amount: string) => rows.push(['balance', id, s.month, '', amount, '', '', '', '', '']);
  figure('opening_balance', s.openingBalance);
  figure('invoices_credited', s.invoicesCredited);
  figure('total_spend', s.totalSpend);
  figure('other_changes', s.otherChanges);
  figure('closing_balance', s.closingBalance);
  for (const i of s.invoices) rows.push(['invoice', i.id, `${i.amountRequested} ${i.currency}`, '', i.amount, i.bonus, '', i.status, i.createdAt, i.paidAt]);
  for (const m of s.byMember) rows.push(['member', m.userId, m.name, m.name, m.spend, '', m.requests, '', '', '']);
  for (const m of s.byModel) rows.push(['model', m.model, m.model, '', m.spend, '', m.requests, '', '', '']);
  for (const k of s.byKey) rows.push(['key', k.apiKeyId, k.label, k.memberName, k.spend, '', k.requests, '', '', '']);
  return csvLines(rows);
}

export function escapeHtml(value: unknown): string {
  const text = value == null ? '' : value instanceof Date ? value.toISOString().slice(0, 16).replace('T', ' ') : String(value);
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function table(headers: string[], rows: unknown[][], empty: string): string {
  if (!rows.length) return `<p class="none">${escapeHtml(empty)}</p>`;
  const head = headers.map((h, i) => `<th${i ? ' class="n"' : ''}>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell, i) => `<td${i ? ' class="n"' : ''}>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** Inline CSS only (the page loads nothing and runs nothing); print keeps rows whole across pages. */
const STYLE = `body{font:14px/1.45 system-ui,sans-serif;color:#111;max-width:960px;margin:24px auto;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}.sub{color:#555;margin:0 0 16px}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.totals td:first-child{font-weight:600}
.none{color:#777}.foot{color:#777;margin-top:24px;font-size:12px}
@media print{body{margin:0;max-width:none}tr{break-inside:avoid}h2{break-after:avoid}th{background:none}}`;

/** The page's Content-Security-Policy: its one inline style by hash, nothing else. */
export const STATEMENT_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

/** The printable statement: self-contained, every text escaped. */
export function statementHtml(s: StatementView, language: StatementLanguage): string {
  const t = TEXT[language];
  const totals = [
    [t.opening, s.openingBalance],
    [t.credited, s.invoicesCredited],
    [t.spend, s.totalSpend],
    [t.other, s.otherChanges],
    [t.closing, s.closingBalance],
  ];
  const sections = [
    `<table class="totals"><tbody>${totals.map(([label, value]) => `<tr><td>${escapeHtml(label)}</td><td class="n">${escapeHtml(value)}</td></tr>`).join('')}</tbody></table>`,
    `<h2>${escapeHtml(t.invoices)}</h2>`,
    table([t.invoice, t.requested, t.amount, t.bonus, t.status, t.created, t.paid], s.invoices.map((i) => [i.id, `${i.amountRequested} ${i.currency}`, i.amount, i.bonus, i.status, i.createdAt, i.paidAt]), t.none),
    `<h2>${escapeHtml(t.byMember)}</h2>`,
    table([t.member, t.spendUsd, t.requests], s.byMember.map((m) => [m.name, m.spend, m.requests]), t.none),
    `<h2>${escapeHtml(t.byModel)}</h2>`,
    table([t.model, t.spendUsd, t.requests], s.byModel.map((m) => [m.model, m.spend, m.requests]), t.none),
    `<h2>${escapeHtml(t.byKey)}</h2>`,
    table([t.key, t.member, t.spendUsd, t.requests], s.byKey.map((k) => [k.label ?? k.apiKeyId ?? t.noKey, k.memberName, k.spend, k.requests]), t.none),
  ];
  return `<!doctype html>
<html lang="${language}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`${t.title} ${s.organizationName} ${s.month}`)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(s.organizationName)}: ${escapeHtml(t.title.toLowerCase())} ${escapeHtml(s.month)}</h1>
<p class="sub">${escapeHtml(t.month)}: ${escapeHtml(s.month)} (${escapeHtml(s.from)} – ${escapeHtml(s.to)} UTC)</p>
${sections.join('\n')}
<p class="foot">${escapeHtml(t.generated)}</p>
</body>
</html>
`;
}
