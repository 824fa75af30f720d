import { useMemo, useState } from 'react';
import { useClient, useQuery, useSubscription, type Client } from 'urql';
import { addDecimal } from '../decimal.js';
import { graphql } from '../gql/index.js';
import type { UsageCatalogQuery, UsageQuery, UsageQueryVariables } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { mergeById } from '../live-totals.js';
import { useOnReconnect, useThrottled } from '../live.js';
import { useOrganization, type Organization } from '../organization.js';
import { useMemberOptions } from './org-common.js';
import { EventDetail } from './usage-detail.js';
import { justBefore, useCsvExport, type Filters } from './usage-export.js';
import { Badge, Button, Card, Empty, Field, formatUsd, Loading, Money, Page, SelectField, TableHead, toneOf } from '../ui.js';

// The account's usage, or (with $org) an organization's: one document so the page has one shape of row.
// $organizationId is unused (and empty) for the account's.
const UsageDocument = graphql(`
  query Usage($org: Boolean!, $organizationId: ID!, $memberId: ID, $from: DateTimeISO, $to: DateTimeISO, $model: String, $group: String, $status: String, $providerFamily: String, $limit: Int) {
    usage(from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @skip(if: $org) {
      id
      routeGroup
      ...UsageEventFields
    }
    organizationUsage(organizationId: $organizationId, memberId: $memberId, from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @include(if: $org) {
      id
      routeGroup
      memberId
      memberName
      ...OrganizationUsageEventFields
    }
  }
`);
graphql(`
  fragment UsageEventFields on UsageEvent {
    requestId
    createdAt
    completedAt
    model
    providerFamily
    routeGroupLabel
    status
    endpoint
    clientSurface
    promptTokens
    completionTokens
    totalTokens
    cacheReadTokens
    cacheWriteTokens
    cacheHitRatio
    amountUsd
    officialCostUsd
    savedUsd
    latencyMs
    errorCode
    apiKey {
      id
      label
    }
  }
`);
// The same fields of an organization's request (its own type: it names the member too).
graphql(`
  fragment OrganizationUsageEventFields on OrganizationUsageEvent {
    requestId
    createdAt
    completedAt
    model
    providerFamily
    routeGroupLabel
    status
    endpoint
    clientSurface
    promptTokens
    completionTokens
    totalTokens
    cacheReadTokens
    cacheWriteTokens
    cacheHitRatio
    amountUsd
    officialCostUsd
    savedUsd
    latencyMs
    errorCode
    apiKey {
      id
      label
    }
  }
`);
// The requests billed from now on, as the list shows them.
const UsageLiveDocument = graphql(`
  subscription UsageLive($organizationId: ID) {
    usageRecorded(organizationId: $organizationId) {
      events {
        id
        routeGroup
        ...UsageEventFields
      }
    }
  }
`);
// What the filters offer: the catalog's models, their public route groups and their provider families.
const UsageCatalogDocument = graphql(`
  query UsageCatalog {
    catalogModels {
      id
      label
      family
      groups {
        id
        label
      }
    }
  }
`);

/** A row of either list; an organization's rows name their member. */
export type Event = NonNullable<UsageQuery['usage']>[number] | NonNullable<UsageQuery['organizationUsage']>[number];

/** The member an organization's row names (null on the account's own rows). */
function memberOf(event: Event): { id: string | null; name: string | null } {
  return 'memberId' in event ? { id: event.memberId ?? null, name: event.memberName ?? null } : { id: null, name: null };
}
const PAGE_SIZE = 50;
function variablesOf(filters: Filters, before: string | null, limit: number, organizationId: string | null): UsageQueryVariables {
  const v: UsageQueryVariables = { limit, org: organizationId !== null, organizationId: organizationId ?? '' };
  if (organizationId && filters.memberId) v.memberId = filters.memberId;
  if (filters.from) v.from = new Date(filters.from).toISOString();
  if (before) v.to = before;
  else if (filters.to) v.to = new Date(filters.to).toISOString();
  for (const name of ['model', 'group', 'status', 'providerFamily'] as const) if (filters[name]) v[name] = filters[name];
  return v;
}

/** Whether a live event belongs in the list the filters asked for (the server's filters, applied here). */
function matches(event: Event, filters: Filters): boolean {
  const at = Date.parse(event.createdAt);
  if (filters.from && at < new Date(filters.from).getTime()) return false;
  if (filters.to && at >= new Date(filters.to).getTime()) return false;
  if (filters.model && event.model !== filters.model) return false;
  if (filters.group && (event.routeGroup ?? '') !== filters.group) return false;
  if (filters.status && event.status !== filters.status) return false;
  if (filters.memberId && memberOf(event).id !== filters.memberId) return false;
  return !filters.providerFamily || event.providerFamily === filters.providerFamily;
}

type Option = { value: string; label: string };

/** The filters' choices from the catalog, "all" first; labels are the catalog's own. */
function filterOptions(models: UsageCatalogQuery['catalogModels'], all: string): { models: Option[]; groups: Option[]; families: Option[] } {
  const groups = new Map<string, string>();
  for (const model of models) for (const group of model.groups) if (!groups.has(group.id)) groups.set(group.id, group.label);
  const byLabel = (a: Option, b: Option) => a.label.localeCompare(b.label);
  const first = { value: '', label: all };
  return {
    models: [first, ...models.map((model) => ({ value: model.id, label: model.label })).sort(byLabel)],
    groups: [first, ...[...groups].map(([value, label]) => ({ value, label })).sort(byLabel)],
    families: [first, ...[...new Set(models.map((model) => model.family))].sort().map((family) => ({ value: family, label: family }))],
  };
}

/**
 * The list's first page, live: requests billed after it was read are put on top when the filters and the time
 * range include them, once each (by id: one already fetched is not added again). The page is read again on every
 * socket (re)connect, since events sent while it was down are lost. Later pages stay as read.
 */
function useLiveFirstPage(fetched: Event[], filters: Filters, firstPage: boolean, reload: () => void, organizationId: string | null): Event[] {
  useOnReconnect(reload);
  const reloadSoon = useThrottled(reload);
  // An organization's live events do not name their member: its first page is read again instead (at most twice a second).
  const [live] = useSubscription({ query: UsageLiveDocument, variables: { organizationId } }, (known: Event[] = [], event) => {
    if (organizationId === null) return mergeById(known, event.usageRecorded.events, 1_000);
    if (firstPage) reloadSoon();
    return known;
  });
  return useMemo(() => {
    if (!firstPage || !live.data) return fetched;
    const ids = new Set(fetched.map((event) => event.id));
    // On a full page, only what is newer than its oldest row: an older one belongs on a later page.
    const oldest = fetched.length >= PAGE_SIZE ? Date.parse(fetched[fetched.length - 1]!.createdAt) : -Infinity;
    const added = live.data.filter((event) => !ids.has(event.id) && Date.parse(event.createdAt) >= oldest && matches(event, filters));
    return added.length ? [...added, ...fetched].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt)) : fetched;
  }, [fetched, filters, firstPage, live.data]);
}

/** The account's rows older than `cursor`, 200 at a time: the pages its CSV export reads. */
function accountPages(client: Client, filters: Filters): (cursor: string | null) => Promise<Event[]> {
  return async (cursor) => rowsOf((await client.query(UsageDocument, variablesOf(filters, cursor, 200, null), { requestPolicy: 'network-only' }).toPromise()).data);
}

/** The rows of either root field (the account's or the organization's usage). */
function rowsOf(data: UsageQuery | undefined): Event[] {
  return data?.organizationUsage ?? data?.usage ?? [];
}

export function Usage() {
  const { t } = useI18n();
  const { current, loading } = useOrganization();
  if (loading) return <Page title={t('nav.usage')}><Loading /></Page>;
  return <UsagePage key={current?.id ?? 'personal'} organization={current} />;
}

function UsagePage({ organization }: { organization: Organization | null }) {
  const { t, count } = useI18n();
  const organizationId = organization?.id ?? null;
  const [draft, setDraft] = useState<Filters>({ from: '', to: '', model: '', group: '', status: '', providerFamily: '', memberId: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const before = cursors[cursors.length - 1] ?? null;
  const [{ data, fetching, error }, reexecute] = useQuery({ query: UsageDocument, variables: variablesOf(filters, before, PAGE_SIZE, organizationId), requestPolicy: 'network-only' });
  const [catalog] = useQuery({ query: UsageCatalogDocument });
  const options = useMemo(() => filterOptions(catalog.data?.catalogModels ?? [], t('common.all')), [catalog.data, t]);
  const [selected, setSelected] = useState<string | null>(null);
  const [exporting, exportCsv, exportFailure] = useCsvExport(filters, organizationId, accountPages(useClient(), filters));
  const fetched = data ? rowsOf(data) : undefined;
  const events = useLiveFirstPage(useMemo(() => fetched ?? [], [fetched]), filters, cursors.length === 1, () => reexecute({ requestPolicy: 'network-only' }), organizationId);
  const members = useMemberOptions(organization, t('common.all'));
  // The older page starts below the oldest row read from the server (live rows on top do not move it).
  const oldest = fetched?.[fetched.length - 1];


  return (
    <Page title={t('nav.usage')}>
      <Card>
        <form
          className="form-grid filters"
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            setFilters(draft);
            setCursors([null]);
          }}
        >
          <Field label={t('usage.from')} type="datetime-local" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
          <Field label={t('usage.to')} type="datetime-local" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
          <SelectField label={t('models.model')} value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })} options={options.models} />
          <SelectField label={t('keys.group')} value={draft.group} onChange={(e) => setDraft({ ...draft, group: e.target.value })} options={options.groups} />
          <SelectField label={t('usage.status')} value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.target.value })} options={['', 'success', 'error', 'cancelled'].map((s) => ({ value: s, label: s || t('common.all') }))} />
          <SelectField label={t('keys.family')} value={draft.providerFamily} onChange={(e) => setDraft({ ...draft, providerFamily: e.target.value })} options={options.families} />
          {members && <SelectField label={t('org.member')} value={draft.memberId} onChange={(e) => setDraft({ ...draft, memberId: e.target.value })} options={members} />}
          <div className="row">
            <Button type="submit">{t('usage.apply')}</Button>
            <Button kind="secondary" onClick={exportCsv} busy={exporting !== null}>
              {exporting !== null && organizationId === null ? t('usage.exporting', { rows: count('row', exporting) }) : t('usage.export')}
            </Button>
          </div>
        </form>
      </Card>
      {error && <p className="alert error" role="alert">{error.graphQLErrors[0]?.message ?? error.message}</p>}
      {exportFailure && <p className="alert error" role="alert">{t('usage.exportFailed', { detail: exportFailure })}</p>}
      {!data && fetching ? (
        <Loading />
      ) : !events.length ? (
        <Empty>{t('usage.none')}</Empty>
      ) : (
        <>
          <PageTotals events={events} />
          <EventTable events={events} onSelect={setSelected} withMember={organizationId !== null} />
        </>
      )}
      <nav className="row pager" aria-label={t('usage.pages')}>
        <Button kind="secondary" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          {t('usage.newer')}
        </Button>
        <span>{t('usage.page', { page: cursors.length })}</span>
        <Button kind="secondary" disabled={!oldest || (fetched?.length ?? 0) < PAGE_SIZE} onClick={() => oldest && setCursors([...cursors, justBefore(oldest.createdAt)])}>
          {t('usage.older')}
        </Button>
      </nav>
      {selected && <EventDetail requestId={selected} row={organizationId === null ? undefined : events.find((e) => e.requestId === selected)} onClose={() => setSelected(null)} />}
    </Page>
  );
}

/** The shown rows' count and spend (they move as requests arrive on the first page). */
function PageTotals({ events }: { events: Event[] }) {
  const { t, count } = useI18n();
  const spend = events.reduce((sum, event) => addDecimal(sum, event.amountUsd) ?? sum, '0');
  return (
    <p className="hint" data-testid="usage-totals">
      {t('usage.onPage', { requests: count('request', events.length), spend: formatUsd(spend) })}
    </p>
  );
}

/** A page of usage events; a row's time opens that request's details. */
function EventTable({ events, onSelect, withMember }: { events: Event[]; onSelect(requestId: string): void; withMember: boolean }) {
  const { t, formatDate, formatNumber } = useI18n();
  return (
    <div className="table-wrap">
      <table className="table" data-testid="usage-table">
        <TableHead columns={[t('usage.time'), t('models.model'), t('keys.group'), t('usage.status'), t('usage.tokens'), t('usage.cost'), t('usage.key'), ...(withMember ? [t('org.member')] : [])]} />
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td>
                <Button kind="link" onClick={() => onSelect(event.requestId)}>
                  {formatDate(event.createdAt)}
                  <span className="visually-hidden"> ({t('usage.details', { id: event.requestId })})</span>
                </Button>
              </td>
              <td>{event.model}</td>
              <td>{event.routeGroupLabel}</td>
              <td>
                <Badge tone={toneOf(event.status)}>{event.status}</Badge>
              </td>
              <td>{event.totalTokens == null ? '—' : formatNumber(event.totalTokens)}</td>
              <td>
                <Money usd={event.amountUsd} />
              </td>
              <td>{event.apiKey?.label ?? event.apiKey?.id ?? '—'}</td>
              {withMember && <td>{memberOf(event).name ?? '—'}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
