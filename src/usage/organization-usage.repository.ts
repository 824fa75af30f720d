import type { MikroORM } from '@mikro-orm/postgresql';
import { USAGE_KINDS } from '../ledger/kinds.js';
import type { AnalyticsReads } from '../shared/analytics-reads.js';
import { AGG, EVENT_COLUMNS, type TotalsRow, type UsageEventRow, type UsageFilters } from './usage.repository.js';

/**
 * An organization's usage as its members see it (issue 56). The organization is the ledger owner of every request
 * made with its keys (`usage_events.user_id`), and each key names the member who made it (`api_keys.created_by`):
 * "by member" is a join through the key. Analytics read where they always read (AnalyticsReads: the replica when
 * configured); the statement's money (ledger sums, invoices) is read on the primary, like every balance.
 */

/** A member's name as the organization shows it: the username, else the e-mail, else the id. */
const MEMBER_NAME = (users: string) => `coalesce(${users}.username, ${users}.email, ${users}.id::text)`;
const USAGE_KIND_LIST = USAGE_KINDS.map((k) => `'${k}'`).join(',');

export interface OrganizationEventRow extends UsageEventRow {
  member_id: string | null;
  member_name: string | null;
  api_key_label: string | null;
}

export interface OrganizationUsageFilters extends UsageFilters {
  from?: Date;
  to?: Date;
  status?: string;
  /** Only requests made with keys this member made. */
  memberId?: string;
  apiKeyId?: string;
}

export type GroupBy = 'member' | 'key' | 'model';

export interface GroupTotalsRow extends TotalsRow {
  key: string | null;
  is_total: boolean;
}

export interface KeyRow {
  id: string;
  label: string | null;
  member_id: string | null;
  member_name: string | null;
}

export interface LedgerMonthRow {
  name: string;
  opening: string;
  closing: string;
  spend: string;
  credited: string;
}

export interface StatementSpendRow {
  api_key_id: string | null;
  model: string | null;
  by_key: boolean;
  spend: string;
  requests: string;
}

/** The `where` of an organization's events (column names unqualified: usage_events alone). */
function eventWhere(organizationId: string, f: OrganizationUsageFilters): { sql: string; params: unknown[] } {
  const clauses = ['user_id = ?'];
  const params: unknown[] = [organizationId];
  const add = (clause: string, value: unknown) => (clauses.push(clause), params.push(value));
  if (f.from) add('created_at >= ?', f.from);
  if (f.to) add('created_at < ?', f.to);
  if (f.model) add('model = ?', f.model);
  if (f.group) add("coalesce(route_group, '') = ?", f.group);
  if (f.status) add('status = ?', f.status);
  if (f.providerFamily) add('provider_family = ?', f.providerFamily);
  if (f.apiKeyId) add('api_key_id = ?', f.apiKeyId);
  // Keys of the organization the member made (a removed member's revoked keys included: their past usage is theirs).
  if (f.memberId) {
    clauses.push('api_key_id in (select id from api_keys where user_id = ? and created_by = ?)');
    params.push(organizationId, f.memberId);
  }
  return { sql: clauses.join(' and '), params };
}

export class OrganizationUsageRepository {
  constructor(
    private readonly reads: AnalyticsReads,
    private readonly orm: MikroORM,
  ) {}

  /** The organization's events, newest first, each with the member and the key it was made with. */
  events(organizationId: string, filters: OrganizationUsageFilters, limit: number): Promise<OrganizationEventRow[]> {
    const where = eventWhere(organizationId, filters);
    return this.reads.query(
      `select e.*, k.created_by as member_id, ${MEMBER_NAME('m')} as member_name, k.label as api_key_label
         from (select ${EVENT_COLUMNS} from usage_events where ${where.sql} order by created_at desc, id desc limit ?) e
         left join api_keys k on k.id = e.api_key_id left join users m on m.id = k.created_by
        order by e.created_at desc, e.id desc`,
      [...where.params, limit],
    );
  }

  /** Totals over the filtered events by member, key or model, and overall (`is_total`). */
  summary(organizationId: string, filters: OrganizationUsageFilters, groupBy: GroupBy): Promise<GroupTotalsRow[]> {
    const where = eventWhere(organizationId, filters);
    const column = { member: 'k.created_by::text', key: 'e.api_key_id::text', model: 'e.model' }[groupBy];
    return this.reads.query(
      `select key, grouping(key) = 1 as is_total, ${AGG}
         from (select ${column} as key, e.amount_usd, e.prompt_tokens, e.completion_tokens, e.cache_read_tokens, e.cache_write_tokens, e.official_cost_usd
                 from (select * from usage_events where ${where.sql}) e left join api_keys k on k.id = e.api_key_id) s
        group by grouping sets ((key), ()) order by is_total desc, spend_usd desc nulls last, key`,
      where.params,
    );
  }

  /** Every UTC bucket from `first` to `last` over the filtered raw events (the rollups know no keys), empty ones as nulls. */
  timeseries(organizationId: string, range: { from: Date; to: Date; first: Date; last: Date }, bucket: 'minute' | 'hour' | 'day', filters: OrganizationUsageFilters): Promise<(TotalsRow & { ts: Date })[]> {
    const where = eventWhere(organizationId, { ...filters, from: range.from, to: range.to });
    return this.reads.query(
      `select b.ts, count(s.at)::bigint as requests, sum(s.amount_usd) as spend_usd, coalesce(sum(s.prompt_tokens), 0) as input_tokens,
              coalesce(sum(s.completion_tokens), 0) as output_tokens, coalesce(sum(s.cache_read_tokens), 0) as cache_read_tokens,
              coalesce(sum(s.cache_write_tokens), 0) as cache_write_tokens
         from generate_series(?::timestamptz, ?::timestamptz, ?::interval) as b(ts)
         left join (select date_trunc('${bucket}', created_at at time zone 'UTC') at time zone 'UTC' as at, amount_usd, prompt_tokens, completion_tokens,
                           cache_read_tokens, cache_write_tokens
                      from usage_events where ${where.sql}) s on s.at = b.ts
        group by b.ts order by b.ts`,
      [range.first, range.last, `1 ${bucket}`, ...where.params],
    );
  }

  /** Every key of the organization (revoked ones too) with the member who made it. */
  keys(organizationId: string): Promise<KeyRow[]> {
    return this.reads.query(
      `select k.id, k.label, k.created_by as member_id, ${MEMBER_NAME('m')} as member_name
         from api_keys k left join users m on m.id = k.created_by where k.user_id = ? order by k.created_at, k.id`,
      [organizationId],
    );
  }

  /** Current members with their names (the owner first). */
  members(organizationId: string): Promise<{ user_id: string; name: string }[]> {
    return this.reads.query(
      `select m.user_id, ${MEMBER_NAME('u')} as name from organization_members m join users u on u.id = m.user_id
        where m.organization_id = ? order by (m.role = 'owner') desc, m.joined_at, m.user_id`,
      [organizationId],
    );
  }

  /**
   * The month's money from the ledger, on the primary: the balance before `start` and before `end`, what usage
   * spent in between, and what invoices credited (their paid and bonus rows, by their idempotency keys).
   */
  async ledgerMonth(organizationId: string, start: Date, end: Date): Promise<LedgerMonthRow> {
    const inMonth = 'created_at >= ? and created_at < ?';
    const [row] = await this.orm.em.fork().execute<LedgerMonthRow[]>(
      `select o.name,
              coalesce((select sum(amount_usd) from transactions where user_id = o.id and created_at < ?), 0)::text as opening,
              coalesce((select sum(amount_usd) from transactions where user_id = o.id and created_at < ?), 0)::text as closing,
              coalesce((select -sum(amount_usd) from transactions where user_id = o.id and ${inMonth} and kind in (${USAGE_KIND_LIST})), 0)::text as spend,
              coalesce((select sum(amount_usd) from transactions where user_id = o.id and ${inMonth} and idempotency_key like 'invoice:%'), 0)::text as credited
         from organizations o where o.id = ?`,
      [start, end, start, end, start, end, organizationId],
    );
    return row!;
  }

  /** Invoices made or paid within [start, end), on the primary. */
  invoicesOfMonth<T>(organizationId: string, start: Date, end: Date): Promise<T[]> {
    return this.orm.em.fork().execute(
      `select * from invoices where user_id = ? and ((created_at >= ? and created_at < ?) or (paid_at >= ? and paid_at < ?)) order by created_at, id`,
      [organizationId, start, end, start, end],
    );
  }

  /**
   * What the month's usage ledger rows cover, by key and by model: the events each debit names (`transaction_id`),
   * so the sums equal the ledger's spend exactly. A debit is dated by its events' completion, so its events began
   * at most a request's length before the month: the 31 days keep the scan to two partitions.
   */
  statementSpend(organizationId: string, start: Date, end: Date): Promise<StatementSpendRow[]> {
    return this.reads.query(
      `select e.api_key_id, e.model, grouping(e.model) = 1 as by_key, sum(e.amount_usd)::text as spend, count(*)::text as requests
         from usage_events e join transactions t on t.id = e.transaction_id
        where e.user_id = ? and e.created_at >= ?::timestamptz - interval '31 days' and e.created_at < ?
          and t.user_id = ? and t.kind in (${USAGE_KIND_LIST}) and t.created_at >= ? and t.created_at < ?
        group by grouping sets ((e.api_key_id), (e.model))`,
      [organizationId, start, end, organizationId, start, end],
    );
  }
}
