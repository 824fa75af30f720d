import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription, type CombinedError } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import type { PaymentsQuery } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { useOrganization } from '../organization.js';
import { useSession } from '../session.js';
import { OrganizationPayments } from './org-payments.js';
import { Badge, Button, Card, Empty, Field, Loading, Money, Notice, Page, ProblemText, SelectField, TableHead, toneOf } from '../ui.js';

const PaymentsDocument = graphql(`
  query Payments($language: String) {
    paymentConfig(language: $language) {
      ...PaymentConfigFields
    }
    invoices(limit: 20) {
      ...InvoiceFields
    }
  }
`);
// What the invoice form offers and asks for (the caller's own agreement): the same for an organization's invoices.
graphql(`
  fragment PaymentConfigFields on PaymentConfig {
    paymentsEnabled
    rubPerUsd
    agreementAccepted
    bonusEnabled
    bonusExpiryDays
    bonusTiers {
      minUsd
      rate
    }
    methods {
      id
      label
      currency
      minUsd
      maxUsd
      enabled
    }
    agreement {
      title
      intro
      termsVersion
      privacyVersion
      sections {
        title
        text
      }
    }
  }
`);
graphql(`
  fragment InvoiceFields on Invoice {
    id
    method
    amountRequested
    currency
    usdCredit
    bonusRate
    bonusUsd
    status
    paymentUrl
    createdAt
    paidAt
  }
`);
const AcceptDocument = graphql(`
  mutation AcceptAgreement($language: String) {
    acceptAgreement(language: $language, surface: "cabinet") {
      accepted
    }
  }
`);
const CreateInvoiceDocument = graphql(`
  mutation CreateInvoice($amountUsd: String!, $method: String!) {
    createInvoice(amountUsd: $amountUsd, method: $method) {
      ...InvoiceFields
    }
  }
`);
const InvoiceUpdatedDocument = graphql(`
  subscription InvoiceUpdated {
    invoiceUpdated {
      ...InvoiceFields
    }
  }
`);

/** Compares two non-negative decimal strings exactly (no floats): -1, 0 or 1. */
export function compareDecimal(a: string, b: string): number {
  const parts = (value: string) => {
    const [whole = '0', fraction = ''] = value.trim().split('.');
    return { whole: whole.replace(/^0+/, ''), fraction };
  };
  const left = parts(a);
  const right = parts(b);
  if (left.whole.length !== right.whole.length) return Math.sign(left.whole.length - right.whole.length);
  const width = Math.max(left.fraction.length, right.fraction.length);
  const x = left.whole + left.fraction.padEnd(width, '0');
  const y = right.whole + right.fraction.padEnd(width, '0');
  return x === y ? 0 : x < y ? -1 : 1;
}

export type PaymentConfig = PaymentsQuery['paymentConfig'];
export type Invoice = PaymentsQuery['invoices'][number];

/** The account's payments, or (in an organization context) the organization's. */
export function Payments() {
  const { t } = useI18n();
  const { current, loading } = useOrganization();
  if (loading) return <Page title={t('nav.payments')}><Loading /></Page>;
  return current ? <OrganizationPayments key={current.id} organization={current} /> : <PersonalPayments />;
}

function PersonalPayments() {
  const { t, language } = useI18n();
  const { refresh } = useSession();
  const [{ data }, refetch] = useQuery({ query: PaymentsDocument, variables: { language } });
  const [createState, createInvoice] = useMutation(CreateInvoiceDocument);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  // Invoice status changes arrive live; the list and the balance follow them.
  useSubscription({ query: InvoiceUpdatedDocument }, (_previous, event) => {
    reload();
    if (event.invoiceUpdated.status === 'paid') void refresh();
    return event;
  });
  const config = data?.paymentConfig;
  if (!config) return <Page title={t('nav.payments')}>{null}</Page>;
  return (
    <Page title={t('nav.payments')}>
      <InvoiceForms
        config={config}
        reload={reload}
        creating={createState.fetching}
        error={createState.error}
        create={async (amountUsd, method) => Boolean((await createInvoice({ amountUsd, method })).data)}
      />
      <Card title={t('pay.invoices')}>{!data.invoices.length ? <Empty>{t('pay.noInvoices')}</Empty> : <InvoiceTable invoices={data.invoices} />}</Card>
    </Page>
  );
}

/**
 * The agreement to accept first (the caller's own acceptance, whoever the invoice is for), then the new-invoice form
 * with the bonus tiers. `create` makes the invoice for the account or the organization and says whether it was made;
 * the page's invoice list (with its payment link while pending) shows it.
 */
export function InvoiceForms({ config, reload, create, creating, error }: { config: PaymentConfig; reload(): void; create(amountUsd: string, method: string): Promise<boolean>; creating: boolean; error: CombinedError | undefined }) {
  const { t } = useI18n();
  const { account } = useSession();
  const [form, setForm] = useState({ amountUsd: '', method: '' });
  const methods = config.methods.filter((m) => m.enabled);
  const method = form.method || methods[0]?.id || '';
  const amountValid = /^\d+(\.\d{1,2})?$/.test(form.amountUsd.trim());
  const tier = amountValid && config.bonusEnabled ? [...config.bonusTiers].reverse().find((tier) => compareDecimal(form.amountUsd, tier.minUsd) >= 0) : undefined;
  const problem = describeError(error);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (await create(form.amountUsd.trim(), method)) {
      setForm({ amountUsd: '', method: form.method });
      reload();
    }
  };

  return (
    <>
      {!config.paymentsEnabled && <Notice kind="warning">{t('pay.disabled')}</Notice>}
      {!config.agreementAccepted ? (
        <AgreementCard config={config} onAccepted={reload} />
      ) : (
        <div className="grid two">
          <Card title={t('pay.newInvoice')}>
            {account?.email && !account.emailVerified && <Notice kind="warning">{t('pay.verifyFirst')}</Notice>}
            <form onSubmit={submit} noValidate>
              <ProblemText problem={problem} />
              <Field label={t('pay.amount')} inputMode="decimal" placeholder="20.00" value={form.amountUsd} onChange={(e) => setForm({ ...form, amountUsd: e.target.value })} error={problem?.fields.amountUsd ?? problem?.fields.amount_usd} />
              <SelectField label={t('pay.method')} value={method} onChange={(e) => setForm({ ...form, method: e.target.value })} options={methods.map((m) => ({ value: m.id, label: `${m.label} (${m.currency}, $${m.minUsd}–$${m.maxUsd})` }))} />
              {tier && <Notice kind="success">{t('pay.tierEarned', { rate: tier.rate, min: tier.minUsd })}</Notice>}
              <Button type="submit" busy={creating} disabled={!amountValid || !method}>
                {t('pay.create')}
              </Button>
            </form>
          </Card>
          <BonusTiers config={config} />
        </div>
      )}
    </>
  );
}

/** The service's terms and privacy policy, accepted (by the signed-in person) before a first invoice. */
function AgreementCard({ config, onAccepted }: { config: PaymentConfig; onAccepted(): void }) {
  const { t, language } = useI18n();
  const [acceptState, accept] = useMutation(AcceptDocument);
  return (
    <Card title={config.agreement.title}>
      <p>{config.agreement.intro}</p>
      <div className="agreement" tabIndex={0} aria-label={config.agreement.title}>
        {config.agreement.sections.map((section) => (
          <section key={section.title}>
            <h3>{section.title}</h3>
            <p>{section.text}</p>
          </section>
        ))}
      </div>
      <p className="hint">{t('pay.versions', { terms: config.agreement.termsVersion, privacy: config.agreement.privacyVersion })}</p>
      <ProblemText problem={describeError(acceptState.error)} />
      <Button busy={acceptState.fetching} onClick={async () => { if ((await accept({ language })).data) onAccepted(); }}>
        {t('pay.accept')}
      </Button>
    </Card>
  );
}

/** Invoices (the account's or an organization's), newest first: amounts, bonus, credit, status, and the payment link while one is pending. */
export function InvoiceTable({ invoices }: { invoices: Invoice[] }) {
  const { t, formatDate } = useI18n();
  return (
    <div className="table-wrap">
      <table className="table" data-testid="invoices">
        <TableHead columns={[t('usage.time'), t('pay.amount'), t('pay.bonus'), t('pay.credit'), t('usage.status'), t('pay.pay')]} />
        <tbody>
          {invoices.map((invoice) => (
            <tr key={invoice.id} data-invoice={invoice.id}>
              <td>{formatDate(invoice.createdAt)}</td>
              <td>
                {invoice.amountRequested} {invoice.currency}
              </td>
              <td>
                <Money usd={invoice.bonusUsd} /> ({invoice.bonusRate})
              </td>
              <td>
                <Money usd={invoice.usdCredit} />
              </td>
              <td>
                <Badge tone={toneOf(invoice.status)}>{invoice.status}</Badge>
              </td>
              <td>
                {invoice.paymentUrl && invoice.status === 'pending' ? (
                  <a href={invoice.paymentUrl} rel="noreferrer noopener" target="_blank">
                    {t('pay.pay')}
                  </a>
                ) : invoice.paidAt ? (
                  formatDate(invoice.paidAt)
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The bonus an invoice earns from each amount up, and how long a bonus lasts. */
function BonusTiers({ config }: { config: PaymentConfig }) {
  const { t, count } = useI18n();
  return (
    <Card title={t('pay.bonusTiers')}>
      {config.bonusEnabled && config.bonusTiers.length ? (
        <ul className="plain">
          {config.bonusTiers.map((tier) => (
            <li key={tier.minUsd}>{t('pay.tierLine', { min: tier.minUsd, rate: tier.rate })}</li>
          ))}
        </ul>
      ) : (
        <Empty>{t('pay.noBonus')}</Empty>
      )}
      {config.bonusEnabled && <p className="hint">{t('pay.bonusExpiry', { days: count('day', config.bonusExpiryDays) })}</p>}
    </Card>
  );
}
