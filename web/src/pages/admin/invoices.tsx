import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../../client.js';
import { graphql } from '../../gql/index.js';
import { useI18n } from '../../i18n.js';
import { Badge, Button, Empty, Loading, Money, Page, ProblemText, SelectField, TableHead, toneOf } from '../../ui.js';

const AdminInvoicesDocument = graphql(`
  query AdminInvoices($status: String) {
    adminInvoices(status: $status, limit: 100) {
      id
      account
      method
      amountRequested
      currency
      usdCredit
      bonusUsd
      status
      createdAt
      paidAt
    }
  }
`);
const MarkPaidDocument = graphql(`
  mutation MarkInvoicePaid($id: ID!, $reference: String) {
    markInvoicePaid(id: $id, reference: $reference) {
      id
      status
    }
  }
`);

export function AdminInvoices() {
  const { t, formatDate } = useI18n();
  const [status, setStatus] = useState('pending');
  const [{ data, fetching }, refetch] = useQuery({ query: AdminInvoicesDocument, variables: { status: status || null }, requestPolicy: 'network-only' });
  const [markState, markPaid] = useMutation(MarkPaidDocument);
  return (
    <Page title={t('nav.adminInvoices')}>
      <SelectField label={t('usage.status')} value={status} onChange={(e) => setStatus(e.target.value)} options={['', 'pending', 'paid', 'expired', 'failed'].map((s) => ({ value: s, label: s || t('common.all') }))} />
      <ProblemText problem={describeError(markState.error)} />
      {!data && fetching ? (
        <Loading />
      ) : !data?.adminInvoices.length ? (
        <Empty>{t('pay.noInvoices')}</Empty>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="admin-invoices">
            <TableHead columns={[t('usage.time'), t('admin.account'), t('pay.method'), t('pay.amount'), t('pay.credit'), t('usage.status')]} actions />
            <tbody>
              {data.adminInvoices.map((invoice) => (
                <tr key={invoice.id}>
                  <td>{formatDate(invoice.createdAt)}</td>
                  <td>{invoice.account}</td>
                  <td>{invoice.method}</td>
                  <td>
                    {invoice.amountRequested} {invoice.currency}
                  </td>
                  <td>
                    <Money usd={invoice.usdCredit} /> (+<Money usd={invoice.bonusUsd} />)
                  </td>
                  <td>
                    <Badge tone={toneOf(invoice.status)}>{invoice.status}</Badge>
                  </td>
                  <td>
                    {invoice.status === 'pending' && (
                      <Button
                        kind="secondary"
                        onClick={async () => {
                          const reference = prompt(t('admin.paymentReference')) ?? undefined;
                          if ((await markPaid({ id: invoice.id, reference: reference || null })).data) refetch({ requestPolicy: 'network-only' });
                        }}
                      >
                        {t('admin.markPaid')}
                      </Button>
                    )}
                    {invoice.paidAt && formatDate(invoice.paidAt)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
