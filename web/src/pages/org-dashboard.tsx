import { useState } from 'react';
import { useQuery, useSubscription } from 'urql';
import { BarChart } from '../chart.js';
import { addDecimal } from '../decimal.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { useOnReconnect, useRenewAt, useThrottled } from '../live.js';
import { may, type Organization } from '../organization.js';
import { Link } from '../router.js';
import { Card, formatUsd, Loading, Money, Page } from '../ui.js';
import { DashboardBalanceDocument, DashboardUsageDocument, DAY, utcDay } from './dashboard.js';

const OrganizationDashboardDocument = graphql(`
  query OrganizationDashboard($organizationId: ID!, $withBalance: Boolean!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {
    organizationBalance(organizationId: $organizationId) @include(if: $withBalance) {
      balanceUsd
      paidUsd
      bonusUsd
    }
    organizationUsageTimeseries(organizationId: $organizationId, from: $chartFrom, to: $now, bucket: "day") {
      points {
        ts
        spendUsd
        requests
      }
    }
  }
`);

/**
 * An organization's dashboard: its balance (for the roles that may see it) and its spend today and over 30 days
 * (a plain member's own: the server narrows the usage to their keys). Live: every billed batch of the organization
 * and every balance change reads the snapshot again, at most twice a second; so does a socket (re)connect.
 */
export function OrganizationDashboard({ organization }: { organization: Organization }) {
  const { t, count } = useI18n();
  const withBalance = may(organization.role, 'viewBalance');
  const [now, setNow] = useState(() => new Date());
  const renew = useThrottled(() => setNow(new Date()));
  const dayStart = utcDay(now).getTime();
  useRenewAt(dayStart + DAY, renew);
  useOnReconnect(renew);
  const variables = { organizationId: organization.id, withBalance, now: now.toISOString(), chartFrom: new Date(dayStart - 29 * DAY).toISOString() };
  const [{ data, fetching }] = useQuery({ query: OrganizationDashboardDocument, variables, requestPolicy: 'network-only' });
  const [balance] = useSubscription({ query: DashboardBalanceDocument, variables: { organizationId: organization.id }, pause: !withBalance });
  useSubscription({ query: DashboardUsageDocument, variables: { organizationId: organization.id } }, (_, event) => (renew(), event));
  if (!data) return <Page title={t('nav.dashboard')}>{fetching ? <Loading /> : null}</Page>;
  const points = data.organizationUsageTimeseries.points;
  const today = points.filter((p) => Date.parse(p.ts) >= dayStart);
  const todaySpend = today.reduce((sum, p) => addDecimal(sum, p.spendUsd) ?? sum, '0');
  const shownBalance = balance.data?.balanceChanged ?? data.organizationBalance;
  return (
    <Page title={t('nav.dashboard')}>
      <p className="hint">{t('org.dashboardIntro', { name: organization.name })}</p>
      <div className="grid stats">
        {shownBalance && (
          <Card title={t('dash.balance')} className="stat">
            <p className="big" data-testid="balance">
              <Money usd={shownBalance.balanceUsd} />
            </p>
            <p>
              {t('dash.paid')} <span data-testid="paid"><Money usd={shownBalance.paidUsd} /></span> · {t('dash.bonus')} <span data-testid="bonus"><Money usd={shownBalance.bonusUsd} /></span>
            </p>
            {may(organization.role, 'billing') && <Link to="/app/org/statements">{t('nav.orgStatements')}</Link>}
          </Card>
        )}
        <Card title={may(organization.role, 'viewAllUsage') ? t('dash.today') : t('org.myToday')} className="stat">
          <p className="big" data-testid="today-spend">
            <Money usd={todaySpend} />
          </p>
          <p data-testid="today-requests">{count('request', today.reduce((sum, p) => sum + p.requests, 0))}</p>
        </Card>
      </div>
      <Card>
        <BarChart
          title={t('dash.spendChart')}
          tableLabel={t('common.showTable')}
          points={points.map((p) => ({ label: p.ts.slice(5, 10), value: Number(p.spendUsd), text: formatUsd(p.spendUsd) }))}
        />
      </Card>
    </Page>
  );
}
