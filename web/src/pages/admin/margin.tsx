import { useMemo, useState, type FormEvent } from 'react';
import { useQuery } from 'urql';
import { GroupedBarChart } from '../../chart.js';
import { describeError } from '../../client.js';
import { addDecimal, percentOf, subtractDecimal } from '../../decimal.js';
import { graphql } from '../../gql/index.js';
import type { AdminMarginReportQuery, CabinetMarginRowFieldsFragment } from '../../gql/graphql.js';
import { useI18n } from '../../i18n.js';
import { Card, Empty, Field, formatUsd, Loading, Money, Page, ProblemText, SelectField, TableHead, Button } from '../../ui.js';

graphql(`
  fragment CabinetMarginRowFields on MarginRow {
    key
    requests
    revenueUsd
    upstreamCostUsd
    marginUsd
    uncostedRequests
    uncostedRevenueUsd
  }
`);
const MarginDocument = graphql(`
  query AdminMarginReport($from: DateTimeISO!, $to: DateTimeISO!) {
    adminMargin(from: $from, to: $to) {
      from
      to
      totals {
        ...CabinetMarginRowFields
      }
      byDay {
        ...CabinetMarginRowFields
      }
      byModel {
        ...CabinetMarginRowFields
      }
      byGroup {
        ...CabinetMarginRowFields
      }
      byUpstream {
        ...CabinetMarginRowFields
      }
    }
  }
`);
const InvoiceDocument = graphql(`
  query AdminUpstreamInvoice($from: DateTimeISO!, $to: DateTimeISO!, $upstreamId: String) {
    adminUpstreamUsage(from: $from, to: $to, upstreamId: $upstreamId) {
      upstreamId
      model
      requests
      inputTokens
      cacheReadTokens
      cacheWriteTokens
      outputTokens
      images
      costUsd
      uncostedRequests
    }
  }
`);

type Row = CabinetMarginRowFieldsFragment;
type Preset = '7' | '30' | 'custom';
interface Period {
  preset: Preset;
  /** YYYY-MM-DD (UTC days), for `custom`. */
  from: string;
  to: string;
}

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The period's bounds: the last N UTC days up to now, or whole UTC days from `from` to `to` included. */
function boundsOf(period: Period, now: number): { from: string; to: string } {
  if (period.preset !== 'custom') {
    const days = Number(period.preset);
    const today = Date.parse(`${utcDay(now)}T00:00:00.000Z`);
    return { from: new Date(today - (days - 1) * DAY_MS).toISOString(), to: new Date(now).toISOString() };
  }
  const from = Date.parse(`${period.from}T00:00:00.000Z`);
  const to = Date.parse(`${period.to}T00:00:00.000Z`) + DAY_MS;
  return { from: Number.isNaN(from) ? period.from : new Date(from).toISOString(), to: Number.isNaN(to) ? period.to : new Date(to).toISOString() };
}

/** Every UTC day of the period (the chart shows the days without traffic too). */
function daysOf(from: string, to: string): string[] {
  const start = Date.parse(`${from.slice(0, 10)}T00:00:00.000Z`);
  const end = Date.parse(to);
  const days: string[] = [];
  for (let day = start; day < end && days.length < 400; day += DAY_MS) days.push(utcDay(day));
  return days;
}

/** Margin as a share of the revenue whose cost is known (display only; the figures themselves stay exact strings). */
function marginPercent(row: Row): string | null {
  const costedRevenue = subtractDecimal(row.revenueUsd, row.uncostedRevenueUsd);
  return costedRevenue === null ? null : percentOf(row.marginUsd, costedRevenue);
}

/**
 * Revenue, upstream cost and margin over a period: totals, a chart by day, tables by model, group and upstream,
 * and one upstream's usage as its invoice should show it. Every amount is the API's decimal string.
 */
export function AdminMargin() {
  const { t } = useI18n();
  const [draft, setDraft] = useState<Period>(() => ({ preset: '7', from: utcDay(Date.now() - 6 * DAY_MS), to: utcDay(Date.now()) }));
  const [applied, setApplied] = useState({ period: draft, at: Date.now() });
  const variables = useMemo(() => boundsOf(applied.period, applied.at), [applied]);
  const [{ data, fetching, error }] = useQuery({ query: MarginDocument, variables, requestPolicy: 'network-only' });
  const [upstream, setUpstream] = useState('');
  const upstreams = (data?.adminMargin.byUpstream ?? []).map((r) => r.key).filter(Boolean);
  const invoiceUpstream = upstreams.includes(upstream) ? upstream : (upstreams[0] ?? '');
  const [invoice] = useQuery({ query: InvoiceDocument, variables: { ...variables, upstreamId: invoiceUpstream }, pause: !invoiceUpstream, requestPolicy: 'network-only' });
  const problem = describeError(error);

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setApplied({ period: draft, at: Date.now() });
  };
  const report = data?.adminMargin;
  const totals = report?.totals;

  return (
    <Page title={t('nav.adminMargin')}>
      <Card>
        <form className="form-grid filters" onSubmit={apply} noValidate aria-label={t('margin.choosePeriod')}>
          <SelectField
            label={t('margin.period')}
            value={draft.preset}
            onChange={(e) => setDraft({ ...draft, preset: e.target.value as Preset })}
            options={[
              { value: '7', label: t('margin.last7') },
              { value: '30', label: t('margin.last30') },
              { value: 'custom', label: t('margin.custom') },
            ]}
          />
          {draft.preset === 'custom' && (
            <>
              <Field label={t('margin.from')} type="date" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} error={problem?.paths.from} />
              <Field label={t('margin.to')} type="date" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} error={problem?.paths.to} />
            </>
          )}
          <Button type="submit" busy={fetching}>
            {t('margin.show')}
          </Button>
        </form>
      </Card>
      <ProblemText problem={problem} />
      {!report || !totals ? (
        fetching ? <Loading /> : null
      ) : (
        <>
          <MarginTotals totals={totals} />
          <MarginChart report={report} />
          <MarginTable title={t('margin.byModel')} keyLabel={t('models.model')} rows={report.byModel} testId="margin-by-model" />
          <MarginTable title={t('margin.byGroup')} keyLabel={t('keys.group')} rows={report.byGroup} testId="margin-by-group" />
          <MarginTable title={t('margin.byUpstream')} keyLabel={t('margin.upstream')} rows={report.byUpstream} testId="margin-by-upstream" />
          <Card title={t('margin.invoice')}>
            <p className="hint">{t('margin.invoiceHint')}</p>
            {!upstreams.length ? (
              <Empty>{t('margin.noUpstreamTraffic')}</Empty>
            ) : (
              <>
                <SelectField label={t('margin.upstream')} value={invoiceUpstream} onChange={(e) => setUpstream(e.target.value)} options={upstreams.map((id) => ({ value: id, label: id }))} />
                <ProblemText problem={describeError(invoice.error)} />
                {!invoice.data ? (
                  <Loading />
                ) : (
                  <InvoiceTable lines={invoice.data.adminUpstreamUsage} />
                )}
              </>
            )}
          </Card>
        </>
      )}
    </Page>
  );
}

/** The period's revenue, upstream cost, margin (with its share of the costed revenue) and what has no cost. */
function MarginTotals({ totals }: { totals: Row }) {
  const { t, formatNumber, count } = useI18n();
  const percent = marginPercent(totals);
  return (
    <div className="grid stats" data-testid="margin-totals">
      <Card title={t('margin.revenue')} className="stat">
        <p className="big" data-testid="total-revenue">
          <Money usd={totals.revenueUsd} />
        </p>
        <p>{count('request', totals.requests)}</p>
      </Card>
      <Card title={t('margin.cost')} className="stat">
        <p className="big" data-testid="total-cost">
          <Money usd={totals.upstreamCostUsd} />
        </p>
      </Card>
      <Card title={t('margin.margin')} className="stat">
        <p className="big" data-testid="total-margin">
          <Money usd={totals.marginUsd} />
        </p>
        <p data-testid="total-percent">{percent === null ? '—' : t('margin.percentOf', { percent })}</p>
      </Card>
      <Card title={t('margin.uncosted')} className="stat">
        <p className="big" data-testid="total-uncosted">
          {formatNumber(totals.uncostedRequests)}
        </p>
        <p>{t('margin.uncostedHint', { revenue: formatUsd(totals.uncostedRevenueUsd) })}</p>
      </Card>
    </div>
  );
}

/** Revenue, cost and margin per day of the period, every day drawn (a day without traffic at zero). */
function MarginChart({ report }: { report: AdminMarginReportQuery['adminMargin'] }) {
  const { t } = useI18n();
  const byDay = new Map(report.byDay.map((r) => [r.key, r]));
  const days = daysOf(report.from, report.to);
  const amount = (value: string | undefined) => Number(value ?? 0);
  return (
    <Card>
      <GroupedBarChart
        testId="margin-chart"
        title={t('margin.chart')}
        tableLabel={t('common.showTable')}
        labels={days}
        series={[
          { name: t('margin.revenue'), values: days.map((d) => amount(byDay.get(d)?.revenueUsd)), texts: days.map((d) => formatUsd(byDay.get(d)?.revenueUsd ?? '0')) },
          { name: t('margin.cost'), values: days.map((d) => amount(byDay.get(d)?.upstreamCostUsd)), texts: days.map((d) => formatUsd(byDay.get(d)?.upstreamCostUsd ?? '0')) },
          { name: t('margin.margin'), values: days.map((d) => amount(byDay.get(d)?.marginUsd)), texts: days.map((d) => formatUsd(byDay.get(d)?.marginUsd ?? '0')) },
        ]}
      />
    </Card>
  );
}

function MarginTable({ title, keyLabel, rows, testId }: { title: string; keyLabel: string; rows: Row[]; testId: string }) {
  const { t, formatNumber } = useI18n();
  return (
    <Card title={title}>
      {!rows.length ? (
        <Empty>{t('margin.noData')}</Empty>
      ) : (
        <div className="table-wrap">
          <table className="table compact" data-testid={testId}>
            <TableHead columns={[keyLabel, t('margin.requests'), t('margin.revenue'), t('margin.cost'), t('margin.margin'), t('margin.percent'), t('margin.uncostedShort')]} />
            <tbody>
              {rows.map((row) => {
                const percent = marginPercent(row);
                return (
                  <tr key={row.key} data-key={row.key}>
                    <th scope="row">{row.key || t('margin.noneKey')}</th>
                    <td className="num">{formatNumber(row.requests)}</td>
                    <td className="num">
                      <Money usd={row.revenueUsd} />
                    </td>
                    <td className="num">
                      <Money usd={row.upstreamCostUsd} />
                    </td>
                    <td className="num">
                      <Money usd={row.marginUsd} />
                    </td>
                    <td className="num">{percent === null ? '—' : `${percent}%`}</td>
                    <td className="num">{row.uncostedRequests ? `${formatNumber(row.uncostedRequests)} (${formatUsd(row.uncostedRevenueUsd)})` : '0'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

type InvoiceLine = { model: string; requests: number; inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; outputTokens: number; images: number; costUsd: string; uncostedRequests: number };

function InvoiceTable({ lines }: { lines: InvoiceLine[] }) {
  const { t, formatNumber } = useI18n();
  if (!lines.length) return <Empty>{t('margin.noData')}</Empty>;
  const sum = (field: 'requests' | 'inputTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'outputTokens' | 'images' | 'uncostedRequests') => lines.reduce((n, line) => n + line[field], 0);
  const cost = lines.reduce<string>((total, line) => addDecimal(total, line.costUsd) ?? total, '0');
  const cells = (line: Omit<InvoiceLine, 'model'>) => (
    <>
      <td className="num">{formatNumber(line.requests)}</td>
      <td className="num">{formatNumber(line.inputTokens)}</td>
      <td className="num">{formatNumber(line.cacheReadTokens)}</td>
      <td className="num">{formatNumber(line.cacheWriteTokens)}</td>
      <td className="num">{formatNumber(line.outputTokens)}</td>
      <td className="num">{formatNumber(line.images)}</td>
      <td className="num">
        <Money usd={line.costUsd} />
      </td>
      <td className="num">{formatNumber(line.uncostedRequests)}</td>
    </>
  );
  return (
    <div className="table-wrap">
      <table className="table compact" data-testid="upstream-invoice">
        <TableHead columns={[t('models.model'), t('margin.requests'), t('margin.inputTokens'), t('margin.cacheRead'), t('margin.cacheWrite'), t('margin.outputTokens'), t('margin.images'), t('margin.cost'), t('margin.uncostedShort')]} />
        <tbody>
          {lines.map((line) => (
            <tr key={line.model} data-model={line.model}>
              <th scope="row">{line.model}</th>
              {cells(line)}
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">{t('margin.total')}</th>
            {cells({ requests: sum('requests'), inputTokens: sum('inputTokens'), cacheReadTokens: sum('cacheReadTokens'), cacheWriteTokens: sum('cacheWriteTokens'), outputTokens: sum('outputTokens'), images: sum('images'), costUsd: cost, uncostedRequests: sum('uncostedRequests') })}
          </tr>
        </tfoot>
      </table>
    </div>
  );
}
