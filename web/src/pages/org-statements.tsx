import { useState, type ReactNode } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.js';
import type { OrganizationStatementQuery } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import type { Organization } from '../organization.js';
import { Badge, Card, Empty, Field, Loading, Money, Page, TableHead, toneOf } from '../ui.js';
import { OrganizationOnly } from './org-common.js';

const OrganizationStatementDocument = graphql(`
  query OrganizationStatement($organizationId: ID!, $month: String!) {
    organizationStatement(organizationId: $organizationId, month: $month) {
      month
      openingBalance
      closingBalance
      totalSpend
      invoicesCredited
      otherChanges
      invoices {
        id
        amount
        status
        paidAt
      }
      byMember {
        userId
        name
        spend
        requests
      }
      byModel {
        model
        spend
        requests
      }
      byKey {
        apiKeyId
        label
        memberName
        spend
        requests
      }
    }
  }
`);

type Statement = OrganizationStatementQuery['organizationStatement'];

export function OrganizationStatements() {
  return <OrganizationOnly title="nav.orgStatements" capability="billing" page={StatementsPage} />;
}

/** This UTC month as YYYY-MM (statements are per UTC calendar month). */
function thisMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

/** A month's statement: balances, invoices and spend by member, model and key, with its CSV and printable page. */
function StatementsPage({ organization }: { organization: Organization }) {
  const { t } = useI18n();
  const [month, setMonth] = useState(thisMonth);
  const valid = /^\d{4}-(0[1-9]|1[0-2])$/.test(month);
  const [{ data, fetching, error }] = useQuery({ query: OrganizationStatementDocument, variables: { organizationId: organization.id, month }, pause: !valid });
  const base = `/orgs/${encodeURIComponent(organization.id)}/statements/${month}`;
  const statement = data?.organizationStatement;
  return (
    <Page title={t('nav.orgStatements')}>
      <Card>
        <div className="form-grid">
          <Field label={t('org.month')} type="month" value={month} max={thisMonth()} onChange={(e) => setMonth(e.target.value)} error={valid ? undefined : t('org.monthInvalid')} />
          {valid && (
            <p className="row">
              <a href={`${base}.csv`} download>
                {t('org.downloadCsv')}
              </a>
              <a href={`${base}.html`} target="_blank" rel="noopener">
                {t('org.printable')}
              </a>
            </p>
          )}
        </div>
      </Card>
      {error && <p className="alert error" role="alert">{error.graphQLErrors[0]?.message ?? error.message}</p>}
      {!statement ? fetching ? <Loading /> : null : <StatementView statement={statement} />}
    </Page>
  );
}

function StatementView({ statement }: { statement: Statement }) {
  const { t, formatDate, count } = useI18n();
  return (
    <>
      <div className="grid stats">
        <Card title={t('org.opening')} className="stat">
          <p className="big" data-testid="opening">
            <Money usd={statement.openingBalance} />
          </p>
        </Card>
        <Card title={t('org.totalSpend')} className="stat">
          <p className="big" data-testid="total-spend">
            <Money usd={statement.totalSpend} />
          </p>
          <p>
            {t('org.credited')} <Money usd={statement.invoicesCredited} /> · {t('org.otherChanges')} <Money usd={statement.otherChanges} />
          </p>
        </Card>
        <Card title={t('org.closing')} className="stat">
          <p className="big" data-testid="closing">
            <Money usd={statement.closingBalance} />
          </p>
        </Card>
      </div>
      <Card title={t('org.invoices')}>
        {!statement.invoices.length ? (
          <Empty>{t('org.noInvoices')}</Empty>
        ) : (
          <SimpleTable
            columns={[t('org.invoice'), t('org.amount'), t('org.status'), t('org.paidAt')]}
            rows={statement.invoices.map((i) => [i.id, <Money key="a" usd={i.amount} />, <Badge key="s" tone={toneOf(i.status)}>{i.status}</Badge>, formatDate(i.paidAt)])}
          />
        )}
      </Card>
      <div className="grid two">
        <Card title={t('org.byMember')}>
          <SpendTable empty={t('org.noSpend')} rows={statement.byMember.map((m) => ({ key: m.userId, name: m.name, spend: m.spend, requests: count('request', m.requests) }))} />
        </Card>
        <Card title={t('org.byModel')}>
          <SpendTable empty={t('org.noSpend')} rows={statement.byModel.map((m) => ({ key: m.model, name: m.model, spend: m.spend, requests: count('request', m.requests) }))} />
        </Card>
      </div>
      <Card title={t('org.byKey')}>
        <SpendTable empty={t('org.noSpend')} rows={statement.byKey.map((k, i) => ({ key: k.apiKeyId ?? `none-${i}`, name: `${k.label ?? k.apiKeyId ?? '—'}${k.memberName ? ` · ${k.memberName}` : ''}`, spend: k.spend, requests: count('request', k.requests) }))} />
      </Card>
    </>
  );
}

function SpendTable({ rows, empty }: { rows: { key: string; name: string; spend: string; requests: string }[]; empty: string }) {
  const { t } = useI18n();
  if (!rows.length) return <Empty>{empty}</Empty>;
  return <SimpleTable columns={[t('org.line'), t('org.spend'), t('org.requests')]} rows={rows.map((r) => [r.name, <Money key="s" usd={r.spend} />, r.requests])} />;
}

function SimpleTable({ columns, rows }: { columns: string[]; rows: ReactNode[][] }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <TableHead columns={columns} />
        <tbody>
          {rows.map((cells, i) => (
            <tr key={i}>
              {cells.map((cell, j) => (
                <td key={j}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
