import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import type { PaymentsQuery } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { useSession } from '../session.js';
import { Badge, Button, Card, Empty, Field, Money, Notice, Page, ProblemText, SelectField, TableHead, toneOf } from '../ui.js';

const PaymentsDocument = graphql(`
  query Payments($language: String) {
    paymentConfig(language: $language) {
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
    invoices(limit: 20) {
      ...InvoiceFields
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

export function Payments() {
  const { t, language } = useI18n();
  const { account, refresh } = useSession();
  const [{ data }, refetch] = useQuery({ query: PaymentsDocument, variables: { language } });
  const [acceptState, accept] = useMutation(AcceptDocument);
  const [createState, createInvoice] = useMutation(CreateInvoiceDocument);
  const [form, setForm] = useState({ amountUsd: '', method: '' });
  // Invoice status changes arrive live; the list and the balance follow them.
  useSubscription({ query: InvoiceUpdatedDocument }, (_previous, event) => {
    refetch({ requestPolicy: 'network-only' });
    if (event.invoiceUpdated.status === 'paid') void refresh();
    return event;
  });
  const config = data?.paymentConfig;
  const methods = config?.methods.filter((m) => m.enabled) ?? [];
  const method = form.method || methods[0]?.id || '';
  const amountValid = /^\d+(\.\d{1,2})?$/.test(form.amountUsd.trim());
  const tier = amountValid && config?.bonusEnabled ? [...config.bonusTiers].reverse().find((tier) => compareDecimal(form.amountUsd, tier.minUsd) >= 0) : undefined;
  const problem = describeError(createState.error);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await createInvoice({ amountUsd: form.amountUsd.trim(), method });
    if (result.data) {
      setForm({ amountUsd: '', method: form.method });
      refetch({ requestPolicy: 'network-only' });
    }
  };

  if (!config) return <Page title={t('nav.payments')}>{null}</Page>;
  return (
    <Page title={t('nav.payments')}>
      {!config.paymentsEnabled && <Notice kind="warning">{t('pay.disabled')}</Notice>}
      {!config.agreementAccepted ? (
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
          <Button busy={acceptState.fetching} onClick={async () => { if ((await accept({ language })).data) refetch({ requestPolicy: 'network-only' }); }}>
            {t('pay.accept')}
          </Button>
        </Card>
      ) : (
        <div className="grid two">
          <Card title={t('pay.newInvoice')}>
            {account?.email && !account.emailVerified && <Notice kind="warning">{t('pay.verifyFirst')}</Notice>}
            <form onSubmit={submit} noValidate>
              <ProblemText problem={problem} />
              <Field label={t('pay.amount')} inputMode="decimal" placeholder="20.00" value={form.amountUsd} onChange={(e) => setForm({ ...form, amountUsd: e.target.value })} error={problem?.fields.amountUsd ?? problem?.fields.amount_usd} />
              <SelectField label={t('pay.method')} value={method} onChange={(e) => setForm({ ...form, method: e.target.value })} options={methods.map((m) => ({ value: m.id, label: `${m.label} (${m.currency}, $${m.minUsd}–$${m.maxUsd})` }))} />
              {tier && <Notice kind="success">{t('pay.tierEarned', { rate: tier.rate, min: tier.minUsd })}</Notice>}
              <Button type="submit" busy={createState.fetching} disabled={!amountValid || !method}>
                {t('pay.create')}
              </Button>
            </form>
          </Card>
          <BonusTiers config={config} />
        </div>
      )}
      <Card title={t('pay.invoices')}>
        {!data?.invoices.length ? (
          <Empty>{t('pay.noInvoices')}</Empty>
        ) : (
          <InvoiceTable invoices={data.invoices} />
        )}
      </Card>
    </Page>
  );
}

/** The account's invoices, newest first: amounts, bonus, credit, status, and the payment link while one is pending. */
function InvoiceTable({ invoices }: { invoices: PaymentsQuery['invoices'] }) {
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
function BonusTiers({ config }: { config: PaymentsQuery['paymentConfig'] }) {
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
