import { z } from 'zod';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { BalanceView } from '../billing/balance-events.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { OrganizationAccess } from '../organizations/organizations.service.js';
import { requireRole } from '../organizations/roles.js';
import { primaryReads, type AnalyticsReads } from '../shared/analytics-reads.js';
import { DomainError } from '../shared/errors.js';
import { intParam, parseInput } from '../shared/validation.js';
import { bucketRange, pointView, rangeError, requireKnownFamily, totalsView, usageListQuery, usageSummaryQuery, usageTimeseriesQuery, type TimeseriesPoint, type TotalsView } from './analytics.service.js';
import { buildStatement, type StatementInvoiceRow } from './organization-statement-data.js';
import { csvLines, type StatementView } from './organization-statement.js';
import { OrganizationUsageRepository, type GroupBy, type OrganizationEventRow, type OrganizationUsageFilters } from './organization-usage.repository.js';
import { toUsageEventView, UsageRepository, type TotalsRow, type UsageEventView } from './usage.repository.js';

const uuid = (what: string) => z.uuid(`Input should be a valid UUID (${what})`);
/** Who and which key: a plain member's own are all they see (`memberId` is then theirs, whatever was asked). */
const scope = { memberId: uuid('memberId').optional(), apiKeyId: uuid('apiKeyId').optional() };

export const organizationUsageQuery = usageListQuery.extend(scope);
/** The most rows one CSV export holds (as the cabinet's own export of an account's usage). */
export const CSV_MAX_ROWS = 20_000;
export const organizationUsageCsvQuery = organizationUsageQuery.extend({ limit: intParam(1, CSV_MAX_ROWS, CSV_MAX_ROWS) });
export const GROUP_BY = ['member', 'key', 'model'] as const;
export const organizationSummaryQuery = usageSummaryQuery.extend({ ...scope, groupBy: z.enum(GROUP_BY).default('member') });
export const organizationTimeseriesQuery = usageTimeseriesQuery.extend(scope);
export const statementInput = z.object({ month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'Input should be a month as YYYY-MM') });

export type OrganizationUsageQuery = z.input<typeof organizationUsageQuery>;
export type OrganizationUsageCsvQuery = z.input<typeof organizationUsageCsvQuery>;
export type OrganizationSummaryQuery = z.input<typeof organizationSummaryQuery>;
export type OrganizationTimeseriesQuery = z.input<typeof organizationTimeseriesQuery>;
export type StatementInput = z.input<typeof statementInput>;

/** A usage event of the organization, with who made it (through which key). */
export interface OrganizationUsageEventView extends UsageEventView {
  memberId: string | null;
  memberName: string | null;
  apiKeyLabel: string | null;
}

export interface OrganizationSummaryView {
  groupBy: GroupBy;
  totals: TotalsView;
  /** One per member, key or model; `key` is its id (the model's name), `label` what a reader recognises. */
  groups: { key: string; label: string; totals: TotalsView }[];
}

const CSV_COLUMNS: [string, (e: OrganizationUsageEventView) => unknown][] = [
  ['created_at', (e) => e.createdAt], ['request_id', (e) => e.requestId], ['member', (e) => e.memberName], ['member_id', (e) => e.memberId],
  ['api_key', (e) => e.apiKeyLabel], ['api_key_id', (e) => e.apiKeyId], ['model', (e) => e.model], ['provider_family', (e) => e.providerFamily],
  ['route_group', (e) => e.routeGroup], ['status', (e) => e.status], ['endpoint', (e) => e.endpoint], ['prompt_tokens', (e) => e.promptTokens],
  ['completion_tokens', (e) => e.completionTokens], ['total_tokens', (e) => e.totalTokens], ['cache_read_tokens', (e) => e.cacheReadTokens],
  ['cache_write_tokens', (e) => e.cacheWriteTokens], ['amount_usd', (e) => e.amountUsd], ['official_cost_usd', (e) => e.officialCostUsd],
  ['saved_usd', (e) => e.savedUsd], ['latency_ms', (e) => e.latencyMs], ['error_code', (e) => e.errorCode],
];

/**
 * What a team sees of its money (issue 56): the organization's balance, its usage by member and by key (lists,
 * summaries, timeseries, CSV) and its monthly statement. Every method takes the caller's `OrganizationAccess`
 * (from OrganizationsService.access, which answers not-found to outsiders) and applies the role rules here:
 * a plain member's usage views are narrowed to their own keys; the statement needs `billing`; the balance
 * `billing` or `manageMembers`.
 */
export class OrganizationUsageService {
  private readonly usage: OrganizationUsageRepository;
  private readonly accountUsage: UsageRepository;

  constructor(private readonly deps: { orm: MikroORM; reads?: AnalyticsReads; catalog: Pick<CatalogService, 'snapshot'>; balances: { snapshot(userId: string): Promise<BalanceView> } }) {
    const reads = deps.reads ?? primaryReads(deps.orm);
    this.usage = new OrganizationUsageRepository(reads, deps.orm);
    this.accountUsage = new UsageRepository(reads);
  }

  /** The wallet's balances now (paid, bonus, held, available): billing roles and managers (owner, admin, billing). */
  async balance(access: OrganizationAccess): Promise<BalanceView> {
    if (!access.may('billing')) requireRole(access.role, 'manageMembers');
    return this.deps.balances.snapshot(access.organizationId);
  }

  /** The member filter the caller may use: any (or none) with viewAllUsage, else always their own. */
  private memberOf(access: OrganizationAccess, asked: string | undefined): string | undefined {
    return access.may('viewAllUsage') ? asked : access.userId;
  }

  private filters(access: OrganizationAccess, q: OrganizationUsageFilters): OrganizationUsageFilters {
    requireKnownFamily(this.deps.catalog, q.providerFamily);
    return { ...q, memberId: this.memberOf(access, q.memberId) };
  }

  async list(access: OrganizationAccess, raw: OrganizationUsageQuery): Promise<{ items: OrganizationUsageEventView[]; limit: number }> {
    const q = parseInput(organizationUsageQuery, raw ?? {});
    const rows = await this.usage.events(access.organizationId, this.filters(access, q), q.limit);
    return { items: rows.map(eventView), limit: q.limit };
  }

  /** The same rows as a CSV file (newest first, at most CSV_MAX_ROWS): what the cabinet's export of an account writes, with the member and key. */
  async csv(access: OrganizationAccess, raw: OrganizationUsageCsvQuery): Promise<string> {
    const q = parseInput(organizationUsageCsvQuery, raw ?? {});
    const rows = (await this.usage.events(access.organizationId, this.filters(access, q), q.limit)).map(eventView);
    return csvLines([CSV_COLUMNS.map(([name]) => name), ...rows.map((e) => CSV_COLUMNS.map(([, value]) => value(e)))]);
  }

  async summary(access: OrganizationAccess, raw: OrganizationSummaryQuery): Promise<OrganizationSummaryView> {
    const q = parseInput(organizationSummaryQuery, raw ?? {});
    if (q.from && q.to && q.from > q.to) throw rangeError();
    const rows = await this.usage.summary(access.organizationId, this.filters(access, q), q.groupBy);
    const labels = await this.labels(access.organizationId, q.groupBy);
    const total = rows.find((r) => r.is_total);
    return {
      groupBy: q.groupBy,
      totals: totalsView(total ?? emptyTotals()),
      groups: rows.filter((r) => !r.is_total).map((r) => ({ key: r.key ?? '', label: (r.key !== null && labels.get(r.key)) || r.key || '-', totals: totalsView(r) })),
    };
  }

  private async labels(organizationId: string, groupBy: GroupBy): Promise<Map<string, string>> {
    if (groupBy === 'model') return new Map();
    const keys = await this.usage.keys(organizationId);
    if (groupBy === 'key') return new Map(keys.map((k) => [k.id, k.label ?? k.id]));
    return new Map(keys.filter((k) => k.member_id).map((k) => [k.member_id!, k.member_name ?? k.member_id!]));
  }

  /** Buckets over [from, to); a member's (or a key's) from the raw events, the whole organization's from the hourly rollups. */
  async timeseries(access: OrganizationAccess, raw: OrganizationTimeseriesQuery): Promise<{ bucket: string; from: Date; to: Date; points: TimeseriesPoint[] }> {
    const q = parseInput(organizationTimeseriesQuery, raw ?? {});
    const filters = this.filters(access, q);
    if (q.from > q.to) throw rangeError();
    const range = bucketRange(q);
    const rows = filters.memberId || filters.apiKeyId
      ? await this.usage.timeseries(access.organizationId, range, q.bucket, filters)
      : await this.accountUsage.timeseries(access.organizationId, range, q.bucket, filters);
    return { bucket: q.bucket, from: q.from, to: q.to, points: rows.map(pointView) };
  }

  /** The month's statement (billing roles): opening and closing balance from the ledger, invoices, spend by member, model and key. */
  async statement(access: OrganizationAccess, raw: StatementInput): Promise<StatementView> {
    requireRole(access.role, 'billing');
    const { month } = parseInput(statementInput, raw ?? {});
    const [year, m] = month.split('-').map(Number) as [number, number];
    const from = new Date(Date.UTC(year, m - 1, 1));
    const to = new Date(Date.UTC(year, m, 1));
    if (from.getUTCFullYear() < 1970) throw new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc: ['month'], msg: 'Input should be a month from 1970-01', type: 'value_error' }] });
    const id = access.organizationId;
    const [ledger, invoices, spend, keys, members] = await Promise.all([
      this.usage.ledgerMonth(id, from, to),
      this.usage.invoicesOfMonth<StatementInvoiceRow>(id, from, to),
      this.usage.statementSpend(id, from, to),
      this.usage.keys(id),
      this.usage.members(id),
    ]);
    return buildStatement({ organizationId: id, month, from, to, ledger, invoices, spend, keys, members });
  }
}

function eventView(row: OrganizationEventRow): OrganizationUsageEventView {
  return { ...toUsageEventView(row), memberId: row.member_id, memberName: row.member_id ? row.member_name : null, apiKeyLabel: row.api_key_label };
}

function emptyTotals(): TotalsRow {
  return { requests: '0', spend_usd: '0', input_tokens: '0', output_tokens: '0', cache_read_tokens: '0', cache_write_tokens: '0', comparable_requests: '0', comparable_spend_usd: '0', official_cost_usd: '0' };
}
