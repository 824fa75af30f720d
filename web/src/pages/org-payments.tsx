import { useMutation, useQuery, useSubscription } from 'urql';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { useOnReconnect, useThrottled } from '../live.js';
import { may, type Organization } from '../organization.js';
import { Link } from '../router.js';
import { Card, Empty, Loading, Money, Notice, Page } from '../ui.js';
import { roleName } from './org-common.js';
import { InvoiceForms, InvoiceTable } from './payments.js';

const OrganizationPaymentsDocument = graphql(`
  query OrganizationPayments($organizationId: ID!, $language: String) {
    paymentConfig(language: $language) {
      ...PaymentConfigFields
    }
    organizationInvoices(organizationId: $organizationId, limit: 20) {
      ...InvoiceFields
    }
    organizationBalance(organizationId: $organizationId) {
      paidUsd
      bonusUsd
      balanceUsd
    }
  }
`);
const CreateOrganizationInvoiceDocument = graphql(`
  mutation CreateOrganizationInvoice($organizationId: ID!, $amountUsd: String!, $method: String!) {
    createOrganizationInvoice(organizationId: $organizationId, amountUsd: $amountUsd, method: $method) {
      ...InvoiceFields
    }
  }
`);
// The organization's wallet as it moves (the first event is the balance now); `kind` tells a credit from spending.
const OrganizationWalletDocument = graphql(`
  subscription OrganizationWallet($organizationId: ID!) {
    balanceChanged(organizationId: $organizationId) {
      paidUsd
      bonusUsd
      balanceUsd
      transaction {
        kind
      }
    }
  }
`);

/** Ledger rows that a paid invoice writes: the invoice list is read again when one arrives. */
const INVOICE_CREDITS = new Set(['topup', 'bonus']);

/**
 * An organization's Payments page (issue 56): the owner and billing members fund its wallet with invoices of its
 * own (the same form, tiers and agreement as the account's); the other roles are told who does.
 */
export function OrganizationPayments({ organization }: { organization: Organization }) {
  const { t } = useI18n();
  if (!may(organization.role, 'billing')) {
    return (
      <Page title={t('nav.payments')}>
        <Notice>{t('org.payBillingOnly', { name: organization.name, role: roleName(t, organization.role) })}</Notice>
      </Page>
    );
  }
  return <FundingPage organization={organization} />;
}

/** The wallet's balance (live), the invoice form and the organization's invoices with their payment links. */
function FundingPage({ organization }: { organization: Organization }) {
  const { t, language } = useI18n();
  const organizationId = organization.id;
  const [{ data, fetching, error }, refetch] = useQuery({ query: OrganizationPaymentsDocument, variables: { organizationId, language }, requestPolicy: 'network-only' });
  const [createState, createInvoice] = useMutation(CreateOrganizationInvoiceDocument);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const reloadSoon = useThrottled(reload);
  useOnReconnect(reload);
  // Invoices of an organization have no subscription of their own: a paid one shows as its credit on the wallet.
  const [wallet] = useSubscription({ query: OrganizationWalletDocument, variables: { organizationId } }, (_, event) => {
    if (INVOICE_CREDITS.has(event.balanceChanged.transaction?.kind ?? '')) reloadSoon();
    return event;
  });
  if (!data) return <Page title={t('nav.payments')}>{fetching ? <Loading /> : error && <p className="alert error" role="alert">{error.graphQLErrors[0]?.message ?? error.message}</p>}</Page>;
  const balance = wallet.data?.balanceChanged ?? data.organizationBalance;
  return (
    <Page title={t('nav.payments')}>
      <p className="hint">{t('org.payIntro', { name: organization.name })}</p>
      <Card title={t('dash.balance')} className="stat">
        <p className="big" data-testid="balance">
          <Money usd={balance.balanceUsd} />
        </p>
        <p>
          {t('dash.paid')} <span data-testid="paid"><Money usd={balance.paidUsd} /></span> · {t('dash.bonus')} <span data-testid="bonus"><Money usd={balance.bonusUsd} /></span>
        </p>
        <Link to="/app/org/statements">{t('nav.orgStatements')}</Link>
      </Card>
      <InvoiceForms
        config={data.paymentConfig}
        reload={reload}
        creating={createState.fetching}
        error={createState.error}
        create={async (amountUsd, method) => Boolean((await createInvoice({ organizationId, amountUsd, method })).data)}
      />
      <Card title={t('pay.invoices')}>
        {!data.organizationInvoices.length ? <Empty>{t('pay.noInvoices')}</Empty> : <InvoiceTable invoices={data.organizationInvoices} />}
      </Card>
    </Page>
  );
}
