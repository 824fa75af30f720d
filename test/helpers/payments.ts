import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { ledgerBalance, newFundedAccount as newUnverifiedAccount } from './accounts.js';
import { http } from './clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from './config.js';
import { useTestGateway, type TestGateway } from './gateway.js';

/** The operator's payments section the payment tests run under: a manual and a checkout method, bonus tiers, an agreement. */
export const PAYMENTS = {
  enabled: true,
  rubPerUsd: '92.3456',
  methods: [
    { id: 'usd_manual', label: 'Wire (USD)', currency: 'USD', minUsd: '5', maxUsd: '1000', enabled: true, provider: 'manual' },
    { id: 'rub_card', label: 'Card (RUB)', currency: 'RUB', minUsd: '1', maxUsd: '5000', enabled: true, provider: 'checkout' },
    { id: 'off', label: 'Disabled', currency: 'USD', minUsd: '1', maxUsd: '10', enabled: false, provider: 'manual' },
  ],
  bonus: { enabled: true, expiryDays: 30, tiers: [{ minUsd: '100', rate: '0.05' }, { minUsd: '500', rate: '0.125' }] },
  invoiceTtlMinutes: 15,
  agreement: {
    termsVersion: 't-1',
    privacyVersion: 'p-1',
    ru: { title: 'Соглашение', intro: 'Вступление', sections: [{ title: 'Раздел', text: 'Текст' }] },
    en: { title: 'Agreement', intro: 'Intro', sections: [{ title: 'Section', text: 'Text' }] },
  },
  checkout: { baseUrl: 'https://pay.example.test/checkout', webhookSecretEnv: 'TEST_CHECKOUT_SECRET', toleranceSeconds: 300 },
  trustedPartner: { enabled: true },
};
export const INVOICE_FIELDS = ['amount_requested', 'bonus_rate', 'bonus_usd', 'created_at', 'currency', 'id', 'method', 'paid_at', 'payment_url', 'status', 'updated_at', 'usd_credit'];
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** Invoices need a verified e-mail (README "Identity", covered in identity-email.test.ts): these accounts have one. */
export async function newFundedAccount(g: TestGateway, paidUsd?: string) {
  const account = await newUnverifiedAccount(g, paidUsd);
  await g.db.query('update users set email_verified = true where id = $1', [account.userId]);
  return account;
}

export type Account = Awaited<ReturnType<typeof newFundedAccount>>;

/**
 * A gateway under PAYMENTS for the file's tests (started before them, stopped after, with its operator file), its
 * checkout webhook secret, and what the payment tests do with them.
 */
export function usePaymentsGateway() {
  const secret = `whsec-${randomUUID()}`;
  const configFile = operatorConfigFile({ payments: PAYMENTS });
  const gw = useTestGateway({ BAIKAL_CONFIG: configFile, TEST_CHECKOUT_SECRET: secret });
  afterAll(() => removeOperatorConfigFile(configFile));

  async function gql(query: string, variables: Record<string, unknown> = {}, token?: string) {
    const response = await http(gw.url, 'POST', '/graphql', { token, body: { query, variables } });
    return response.body as { data: any; errors?: { message: string; extensions?: Record<string, any> }[] };
  }
  /** An account with a verified e-mail that has accepted the agreement. */
  async function accepted(): Promise<Account> {
    const account = await newFundedAccount(gw);
    const response = await http(gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: {} });
    expect(response.status, response.text).toBe(200);
    return account;
  }
  async function createInvoice(account: Account, body: Record<string, unknown>) {
    return http(gw.url, 'POST', '/payments/invoices', { token: account.token, body });
  }
  function sign(raw: string, key = secret, t = Math.floor(Date.now() / 1000)): string {
    return `t=${t},v1=${createHmac('sha256', key).update(`${t}.${raw}`).digest('hex')}`;
  }
  async function webhook(event: Record<string, unknown>, signature: string | null | ((raw: string) => string) = (raw) => sign(raw)) {
    const raw = JSON.stringify(event);
    const header = typeof signature === 'function' ? signature(raw) : signature;
    return http(gw.url, 'POST', '/payments/webhooks/checkout', { rawBody: raw, headers: header ? { 'x-checkout-signature': header } : {} });
  }
  async function balances(userId: string) {
    const [row] = await gw.db.query<{ paid: string; bonus: string }>('select balance_paid_usd::text as paid, balance_bonus_usd::text as bonus from users where id = $1', [userId]);
    return { paid: Number(row!.paid), bonus: Number(row!.bonus), paidText: row!.paid, bonusText: row!.bonus };
  }
  async function expectLedgerConsistent(userId: string) {
    const ledger = await ledgerBalance(gw, userId);
    expect(ledger.paidMatches).toBe(true);
    expect(ledger.bonusMatches).toBe(true);
    expect(Number(ledger.balance)).toBe(Number(ledger.ledger));
  }
  return { gw, secret, configFile, gql, accepted, createInvoice, sign, webhook, balances, expectLedgerConsistent };
}
