import { useEffect, useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { BarChart } from '../chart.js';
import { graphql } from '../gql/index.js';
import type { DashboardQuery, DashboardQueryVariables } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { withLive } from '../live-totals.js';
import { useLiveRequests, useRenewAt, useRenewed } from '../live.js';
import { useOrganization } from '../organization.js';
import { Link } from '../router.js';
import { OrganizationDashboard } from './org-dashboard.js';
import { Card, formatUsd, Loading, Money, Page } from '../ui.js';

const DashboardDocument = graphql(`
  query Dashboard($dayStart: DateTimeISO!, $monthStart: DateTimeISO!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {
    me {
      userId
      balanceUsd
    }
    paymentConfig {
      paidBalanceUsd
      bonusBalanceUsd
      nextBonusExpiry
    }
    today: usageSummary(from: $dayStart, to: $now) {
      totals {
        requests
        spendUsd
        inputTokens
        outputTokens
      }
    }
    month: usageSummary(from: $monthStart, to: $now) {
      totals {
        requests
        spendUsd
        officialCostUsd
        savedUsd
        savedPercent
        inputTokens
        outputTokens
      }
    }
    usageTimeseries(from: $chartFrom, to: $now, bucket: "day") {
      points {
        ts
        spendUsd
        inputTokens
        outputTokens
        requests
      }
    }
  }
`);

// The balances as they move (the first event is the balance now), and each billed batch of requests.
export const DashboardBalanceDocument = graphql(`
  subscription DashboardBalance($organizationId: ID) {
    balanceChanged(organizationId: $organizationId) {
      paidUsd
      bonusUsd
      balanceUsd
      availableUsd
    }
  }
`);
export const DashboardUsageDocument = graphql(`
  subscription DashboardUsage($organizationId: ID) {
    usageRecorded(organizationId: $organizationId) {
      events {
        id
        createdAt
        amountUsd
        promptTokens
        completionTokens
      }
    }
  }
`);

export const DAY = 86_400_000;

/** Midnight UTC (the usage rollups and the timeseries' day buckets are UTC). */
export function utcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

/** The snapshot's ranges: today and this month (UTC) up to now, and the chart's 30 days. */
function rangesAt(now: Date): DashboardQueryVariables {
  const dayStart = utcDay(now);
  return {
    now: now.toISOString(),
    dayStart: dayStart.toISOString(),
    monthStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    chartFrom: new Date(dayStart.getTime() - 29 * DAY).toISOString(),
  };
}

/**
 * The dashboard's figures, live: the snapshot (read again on every socket (re)connect and at UTC midnight), its
 * balances replaced by each balanceChanged, its today and month totals plus the requests billed since it (a
 * request counts into the UTC day it was created in, so a batch from before midnight never counts into the new day).
 */
function useLiveDashboard() {
  const { value: variables, renew } = useRenewed(() => rangesAt(new Date()));
  const [result] = useQuery({ query: DashboardDocument, variables, requestPolicy: 'network-only' });
  // The last snapshot with the ranges it was read for: kept on screen while the next one loads.
  const [shown, setShown] = useState<{ data: DashboardQuery; ranges: DashboardQueryVariables } | null>(null);
  useEffect(() => {
    if (result.data && result.operation) setShown({ data: result.data, ranges: result.operation.variables as DashboardQueryVariables });
  }, [result.data, result.operation]);
  const since = shown ? Date.parse(shown.ranges.now) : null;
  const dayEnd = Date.parse(variables.dayStart) + DAY;
  useRenewAt(dayEnd, renew);
  const [balance] = useSubscription({ query: DashboardBalanceDocument, variables: { organizationId: null } });
  const reduce = useLiveRequests(since, renew);
  const [live] = useSubscription({ query: DashboardUsageDocument, variables: { organizationId: null } }, (known: ReturnType<typeof reduce> | undefined, event) => reduce(known, event.usageRecorded.events));
  if (!shown || since === null) return { data: null, fetching: result.fetching };
  const ranges = shown.ranges;
  const start = new Date(ranges.monthStart);
  const monthEnd = Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
  const events = live.data ?? [];
  const data = shown.data;
  return {
    fetching: result.fetching,
    data: {
      ...data,
      balance: balance.data?.balanceChanged ?? { paidUsd: data.paymentConfig.paidBalanceUsd, bonusUsd: data.paymentConfig.bonusBalanceUsd, balanceUsd: data.me.balanceUsd, availableUsd: null },
      today: withLive(data.today.totals, events, since, Date.parse(ranges.dayStart) + DAY),
      month: withLive(data.month.totals, events, since, monthEnd),
    },
  };
}

export function Dashboard() {
  const { t } = useI18n();
  const { current, loading } = useOrganization();
  if (loading) return <Page title={t('nav.dashboard')}><Loading /></Page>;
  return current ? <OrganizationDashboard key={current.id} organization={current} /> : <PersonalDashboard />;
}

function PersonalDashboard() {
  const { t, formatDate, formatNumber, count } = useI18n();
  const { data, fetching } = useLiveDashboard();
  if (!data) return <Page title={t('nav.dashboard')}>{fetching ? <Loading /> : null}</Page>;
  const month = data.month;
  const points = data.usageTimeseries.points;
  const dayLabel = (iso: string) => iso.slice(5, 10);
  return (
    <Page title={t('nav.dashboard')}>
      <div className="grid stats">
        <Card title={t('dash.balance')} className="stat">
          <p className="big" data-testid="balance">
            <Money usd={data.balance.balanceUsd} />
          </p>
          <p>
            {t('dash.paid')} <span data-testid="paid"><Money usd={data.balance.paidUsd} /></span> · {t('dash.bonus')} <span data-testid="bonus"><Money usd={data.balance.bonusUsd} /></span>
          </p>
          {data.balance.availableUsd !== null && (
            <p>
              {t('dash.available')} <span data-testid="available"><Money usd={data.balance.availableUsd} /></span>
            </p>
          )}
          {data.paymentConfig.nextBonusExpiry && <p className="hint">{t('dash.bonusExpiry', { date: formatDate(data.paymentConfig.nextBonusExpiry) })}</p>}
          <Link to="/app/payments">{t('dash.topUp')}</Link>
        </Card>
        <Card title={t('dash.today')} className="stat">
          <p className="big" data-testid="today-spend">
            <Money usd={data.today.spendUsd} />
          </p>
          <p data-testid="today-requests">{count('request', data.today.requests)}</p>
        </Card>
        <Card title={t('dash.month')} className="stat">
          <p className="big">
            <Money usd={month.spendUsd} />
          </p>
          <p>{count('request', month.requests)}</p>
          <p>{t('dash.tokens', { input: count('inputToken', month.inputTokens), output: count('outputToken', month.outputTokens) })}</p>
        </Card>
        <Card title={t('dash.savings')} className="stat">
          <p className="big">
            <Money usd={month.savedUsd} />
          </p>
          <p>{t('dash.savingsText', { official: formatUsd(month.officialCostUsd), percent: month.savedPercent })}</p>
        </Card>
      </div>
      <div className="grid two">
        <Card>
          <BarChart
            title={t('dash.spendChart')}
            tableLabel={t('common.showTable')}
            points={points.map((p) => ({ label: dayLabel(p.ts), value: Number(p.spendUsd), text: formatUsd(p.spendUsd) }))}
          />
        </Card>
        <Card>
          <BarChart
            title={t('dash.tokenChart')}
            tableLabel={t('common.showTable')}
            points={points.map((p) => ({ label: dayLabel(p.ts), value: p.inputTokens + p.outputTokens, text: formatNumber(p.inputTokens + p.outputTokens) }))}
          />
        </Card>
      </div>
    </Page>
  );
}
