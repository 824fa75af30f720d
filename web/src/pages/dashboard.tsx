import { useMemo } from 'react';
import { useQuery } from 'urql';
import { BarChart } from '../chart.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
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

/** Midnight UTC (the usage rollups and the timeseries' day buckets are UTC). */
function utcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

export function Dashboard() {
  const { t, formatDate, formatNumber } = useI18n();
  const variables = useMemo(() => {
    const now = new Date();
    const dayStart = utcDay(now);
    return {
      now: now.toISOString(),
      dayStart: dayStart.toISOString(),
      monthStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      chartFrom: new Date(dayStart.getTime() - 29 * 86_400_000).toISOString(),
    };
  }, []);
  const [{ data, fetching }] = useQuery({ query: DashboardDocument, variables, requestPolicy: 'network-only' });
  if (!data) return <Page title={t('nav.dashboard')}>{fetching ? <Loading /> : null}</Page>;
  const month = data.month.totals;
  const points = data.usageTimeseries.points;
  const dayLabel = (iso: string) => iso.slice(5, 10);
  return (
    <Page title={t('nav.dashboard')}>
      <div className="grid stats">
        <Card title={t('dash.balance')} className="stat">
          <p className="big" data-testid="balance">
            <Money usd={data.me.balanceUsd} />
          </p>
          <p>
            {t('dash.paid')} <Money usd={data.paymentConfig.paidBalanceUsd} /> · {t('dash.bonus')} <Money usd={data.paymentConfig.bonusBalanceUsd} />
          </p>
          {data.paymentConfig.nextBonusExpiry && <p className="hint">{t('dash.bonusExpiry', { date: formatDate(data.paymentConfig.nextBonusExpiry) })}</p>}
          <Link to="/app/payments">{t('dash.topUp')}</Link>
        </Card>
        <Card title={t('dash.today')} className="stat">
          <p className="big">
            <Money usd={data.today.totals.spendUsd} />
          </p>
          <p>{t('dash.requests', { count: formatNumber(data.today.totals.requests) })}</p>
        </Card>
        <Card title={t('dash.month')} className="stat">
          <p className="big">
            <Money usd={month.spendUsd} />
          </p>
          <p>{t('dash.requests', { count: formatNumber(month.requests) })}</p>
          <p>{t('dash.tokens', { input: formatNumber(month.inputTokens), output: formatNumber(month.outputTokens) })}</p>
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
