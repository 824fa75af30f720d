import { createHmac, randomUUID } from 'node:crypto';
import { TRPCClientError } from '@trpc/client';
import { createClient } from 'graphql-ws';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../../src/config.js';
import { ledgerBalance, newAdmin, newFundedAccount as newUnverifiedAccount } from '../helpers/accounts.js';
import { http, trpcClient } from '../helpers/clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from '../helpers/config.js';
import { useTestGateway } from '../helpers/gateway.js';

const SECRET = `whsec-${randomUUID()}`;
const PAYMENTS = {
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
const configFile = operatorConfigFile({ payments: PAYMENTS });

const gw = useTestGateway({ BAIKAL_CONFIG: configFile, TEST_CHECKOUT_SECRET: SECRET });
afterAll(() => removeOperatorConfigFile(configFile));

const INVOICE_FIELDS = ['amount_requested', 'bonus_rate', 'bonus_usd', 'created_at', 'currency', 'id', 'method', 'paid_at', 'payment_url', 'status', 'updated_at', 'usd_credit'];
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** Invoices need a verified e-mail (README "Identity", covered in identity-email.test.ts): these accounts have one. */
async function newFundedAccount(g: typeof gw, paidUsd?: string) {
  const account = await newUnverifiedAccount(g, paidUsd);
  await g.db.query('update users set email_verified = true where id = $1', [account.userId]);
  return account;
}

type Account = Awaited<ReturnType<typeof newFundedAccount>>;

async function gql(query: string, variables: Record<string, unknown> = {}, token?: string) {
  const response = await http(gw.url, 'POST', '/graphql', { token, body: { query, variables } });
  return response.body as { data: any; errors?: { message: string; extensions?: Record<string, any> }[] };
}

async function accepted(): Promise<Account> {
  const account = await newFundedAccount(gw);
  const response = await http(gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: {} });
  expect(response.status, response.text).toBe(200);
  return account;
}

async function createInvoice(account: Account, body: Record<string, unknown>) {
  return http(gw.url, 'POST', '/payments/invoices', { token: account.token, body });
}

function sign(raw: string, secret = SECRET, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
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

describe('GET /payments/config', () => {
  it('returns the full payment config in ru by default and in en', async () => {
    const account = await newFundedAccount(gw, '3');
    const response = await http(gw.url, 'GET', '/payments/config', { token: account.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      payments_enabled: true,
      rub_per_usd: '92.3456',
      methods: [
        { id: 'usd_manual', label: 'Wire (USD)', currency: 'USD', min_usd: '5', max_usd: '1000', enabled: true },
        { id: 'rub_card', label: 'Card (RUB)', currency: 'RUB', min_usd: '1', max_usd: '5000', enabled: true },
        { id: 'off', label: 'Disabled', currency: 'USD', min_usd: '1', max_usd: '10', enabled: false },
      ],
      agreement: { terms_version: 't-1', privacy_version: 'p-1', title: 'Соглашение', intro: 'Вступление', sections: [{ title: 'Раздел', text: 'Текст' }] },
      agreement_accepted: false,
      paid_balance_usd: '3',
      bonus_balance_usd: '0',
      next_bonus_expiry: null,
      bonus_enabled: true,
      bonus_expiry_days: 30,
      bonus_tiers: [{ min_usd: '100', rate: '0.05' }, { min_usd: '500', rate: '0.125' }],
      trusted_partner_enabled: true,
      trusted_partner_active: false,
      trusted_partner_valid_until: null,
    });
    const en = await http(gw.url, 'GET', '/payments/config?language=en', { token: account.token });
    expect(en.body.agreement).toEqual({ terms_version: 't-1', privacy_version: 'p-1', title: 'Agreement', intro: 'Intro', sections: [{ title: 'Section', text: 'Text' }] });
  });

  it.each(['de', 'RU', ''])('422 with loc [query, language] for language=%j', async (language) => {
    const { token } = await newFundedAccount(gw);
    const response = await http(gw.url, 'GET', `/payments/config?language=${language}`, { token });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'language']);
  });

  it('401 for every payments endpoint without a session', async () => {
    for (const [method, p] of [['GET', '/payments/config'], ['POST', '/payments/agreements/accept'], ['GET', '/payments/invoices'], ['POST', '/payments/invoices'], ['GET', `/payments/invoices/${UNKNOWN_ID}`]] as const) {
      expect((await http(gw.url, method, p, { body: method === 'POST' ? {} : undefined })).status).toBe(401);
    }
  });

  it('shows an active trusted partner', async () => {
    const admin = await newAdmin(gw);
    const account = await newFundedAccount(gw);
    const until = new Date(Date.now() + 86_400_000);
    await gw.services.billing.setTrustedPartner(admin.actor, { userId: account.userId, validUntil: until, creditLimitUsd: '50' });
    const response = await http(gw.url, 'GET', '/payments/config', { token: account.token });
    expect(response.body).toMatchObject({ trusted_partner_active: true, trusted_partner_valid_until: until.toISOString() });
  });
});

describe('agreement acceptance', () => {
  it('records the current versions with address and surface; a new version needs a new acceptance', async () => {
    const account = await newFundedAccount(gw);
    expect((await createInvoice(account, { amount_usd: 10, method: 'usd_manual' })).body).toMatchObject({ code: 'agreement_required' });
    expect((await createInvoice(account, { amount_usd: 10, method: 'usd_manual' })).status).toBe(403);
    const response = await http(gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: { language: 'en', surface: 'bot' } });
    expect(response.body).toEqual({ accepted: true, terms_version: 't-1', privacy_version: 'p-1' });
    const [row] = await gw.db.query('select * from agreement_acceptances where user_id = $1', [account.userId]);
    expect(row).toMatchObject({ terms_version: 't-1', privacy_version: 'p-1', language: 'en', surface: 'bot' });
    expect(row!.client_address).toMatch(/127\.0\.0\.1/);
    expect((await http(gw.url, 'GET', '/payments/config', { token: account.token })).body.agreement_accepted).toBe(true);
    expect((await createInvoice(account, { amount_usd: 10, method: 'usd_manual' })).status).toBe(201);

    const original = gw.config.payments.agreement.termsVersion;
    gw.config.payments.agreement.termsVersion = 't-2';
    try {
      expect((await http(gw.url, 'GET', '/payments/config', { token: account.token })).body.agreement_accepted).toBe(false);
      expect((await createInvoice(account, { amount_usd: 10, method: 'usd_manual' })).body.code).toBe('agreement_required');
      const again = await http(gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: {} });
      expect(again.body).toEqual({ accepted: true, terms_version: 't-2', privacy_version: 'p-1' });
      expect((await createInvoice(account, { amount_usd: 10, method: 'usd_manual' })).status).toBe(201);
    } finally {
      gw.config.payments.agreement.termsVersion = original;
    }
  });

  it.each([
    [{ language: 'de' }, ['body', 'language']],
    [{ surface: 'Not A Label!' }, ['body', 'surface']],
    [{ extra: 1 }, ['body', 'extra']],
  ])('422 for %j', async (body, loc) => {
    const { token } = await newFundedAccount(gw);
    const response = await http(gw.url, 'POST', '/payments/agreements/accept', { token, body });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(loc);
  });
});

describe('POST /payments/invoices', () => {
  it('creates a USD manual invoice exactly per SPEC', async () => {
    const account = await accepted();
    const response = await createInvoice(account, { amount_usd: '25.5', method: 'usd_manual' });
    expect(response.status, response.text).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(INVOICE_FIELDS);
    expect(response.body).toMatchObject({
      method: 'usd_manual', amount_requested: '25.5', currency: 'USD', usd_credit: '25.5', bonus_rate: '0', bonus_usd: '0', status: 'pending', payment_url: null, paid_at: null,
    });
    expect(new Date(response.body.created_at).toISOString()).toBe(response.body.created_at);
    const got = await http(gw.url, 'GET', `/payments/invoices/${response.body.id}`, { token: account.token });
    expect(got.body).toEqual(response.body);
  });

  it('converts to RUB exactly (half-up to kopecks) and builds the checkout URL', async () => {
    const account = await accepted();
    // 12.34 x 92.3456 = 1139.544704 -> 1139.54 ; 0.05 bonus tiers do not apply below 100.
    const a = await createInvoice(account, { amount_usd: '12.34', method: 'rub_card' });
    expect(a.body).toMatchObject({ amount_requested: '1139.54', currency: 'RUB', usd_credit: '12.34', bonus_rate: '0', bonus_usd: '0' });
    expect(a.body.payment_url).toBe(`https://pay.example.test/checkout?invoice=${a.body.id}&amount=1139.54&currency=RUB`);
    // 1.01 x 92.3456 = 93.269056 -> 93.27 (rounded up)
    expect((await createInvoice(account, { amount_usd: 1.01, method: 'rub_card' })).body.amount_requested).toBe('93.27');
    // 0.5 kopeck exactly rounds half-up: 2.5 x 92.3456 = 230.864 -> 230.86; 1.25 x 92.3456 = 115.432
    expect((await createInvoice(account, { amount_usd: '2.5', method: 'rub_card' })).body.amount_requested).toBe('230.86');
    // A float-unfriendly amount stays exact: 0.1 + 0.2 territory.
    expect((await createInvoice(account, { amount_usd: '3.3', method: 'rub_card' })).body.amount_requested).toBe('304.74'); // 304.74048
  });

  it.each([
    ['99.99', '0', '0'],
    ['100', '0.05', '5'],
    ['100.01', '0.05', '5.0005'],
    ['499.99', '0.05', '24.9995'],
    ['500', '0.125', '62.5'],
    ['500.01', '0.125', '62.50125'],
  ])('bonus tier for %s USD: rate %s, bonus %s', async (amount, rate, bonus) => {
    const account = await accepted();
    const response = await createInvoice(account, { amount_usd: amount, method: 'usd_manual' });
    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({ usd_credit: amount, bonus_rate: rate, bonus_usd: bonus });
  });

  it.each([
    [{ method: 'usd_manual' }, ['body', 'amount_usd'], 'missing'],
    [{ amount_usd: 'ten', method: 'usd_manual' }, ['body', 'amount_usd'], 'decimal_parsing'],
    [{ amount_usd: '1e3', method: 'usd_manual' }, ['body', 'amount_usd'], 'decimal_parsing'],
    [{ amount_usd: true, method: 'usd_manual' }, ['body', 'amount_usd'], undefined],
    [{ amount_usd: '-10', method: 'usd_manual' }, ['body', 'amount_usd'], 'greater_than'],
    [{ amount_usd: '10.001', method: 'usd_manual' }, ['body', 'amount_usd'], 'decimal_max_places'],
    [{ amount_usd: '10' }, ['body', 'method'], 'missing'],
    [{ amount_usd: '10', method: 'nope' }, ['body', 'method'], 'enum'],
    [{ amount_usd: '10', method: 'off' }, ['body', 'method'], 'enum'],
    [{ amount_usd: '4.99', method: 'usd_manual' }, ['body', 'amount_usd'], 'range_error'],
    [{ amount_usd: '1000.01', method: 'usd_manual' }, ['body', 'amount_usd'], 'range_error'],
    [{ amount_usd: '10', method: 'usd_manual', extra: 1 }, ['body', 'extra'], 'extra_forbidden'],
  ])('422 for %j', async (body, loc, type) => {
    const account = await accepted();
    const response = await createInvoice(account, body);
    expect(response.status, response.text).toBe(422);
    expect(response.body.detail[0].loc).toEqual(loc);
    if (type) expect(response.body.detail[0].type).toBe(type);
    if (type === 'range_error') expect(response.body.detail[0].msg).toContain('between 5 and 1000');
  });

  it('accepts the bounds themselves', async () => {
    const account = await accepted();
    expect((await createInvoice(account, { amount_usd: 5, method: 'usd_manual' })).status).toBe(201);
    expect((await createInvoice(account, { amount_usd: '1000', method: 'usd_manual' })).status).toBe(201);
  });

  it('403 payments_disabled when the operator turns payments off', async () => {
    const account = await accepted();
    gw.config.payments.enabled = false;
    try {
      const response = await createInvoice(account, { amount_usd: 10, method: 'usd_manual' });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('payments_disabled');
      expect((await http(gw.url, 'GET', '/payments/config', { token: account.token })).body.payments_enabled).toBe(false);
    } finally {
      gw.config.payments.enabled = true;
    }
  });
});

describe('GET /payments/invoices', () => {
  it('lists own invoices newest first with limit; 422 for bad limits and ids; 404 for foreign or unknown ids', async () => {
    const account = await accepted();
    const other = await accepted();
    const ids: string[] = [];
    for (const amount of ['6', '7', '8']) ids.push((await createInvoice(account, { amount_usd: amount, method: 'usd_manual' })).body.id);
    const foreign = (await createInvoice(other, { amount_usd: 9, method: 'usd_manual' })).body.id;
    const list = await http(gw.url, 'GET', '/payments/invoices', { token: account.token });
    expect(list.body.items.map((i: any) => i.id)).toEqual([...ids].reverse());
    for (const item of list.body.items) expect(Object.keys(item).sort()).toEqual(INVOICE_FIELDS);
    expect((await http(gw.url, 'GET', '/payments/invoices?limit=2', { token: account.token })).body.items.map((i: any) => i.id)).toEqual([ids[2], ids[1]]);
    for (const limit of ['0', '101', 'x']) {
      const bad = await http(gw.url, 'GET', `/payments/invoices?limit=${limit}`, { token: account.token });
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(['query', 'limit']);
    }
    const badId = await http(gw.url, 'GET', '/payments/invoices/not-a-uuid', { token: account.token });
    expect(badId.status).toBe(422);
    expect(badId.body.detail[0].loc).toEqual(['path', 'invoice_id']);
    expect((await http(gw.url, 'GET', `/payments/invoices/${foreign}`, { token: account.token })).status).toBe(404);
    expect((await http(gw.url, 'GET', `/payments/invoices/${UNKNOWN_ID}`, { token: account.token })).status).toBe(404);
  });
});

describe('checkout provider webhook', () => {
  async function checkoutInvoice(account: Account, amount = '100') {
    const response = await createInvoice(account, { amount_usd: amount, method: 'rub_card' });
    expect(response.status, response.text).toBe(201);
    return response.body;
  }
  const paidEvent = (invoice: any, overrides: Record<string, unknown> = {}) => ({
    id: `evt_${randomUUID()}`, type: 'invoice.paid', invoice_id: invoice.id, amount: invoice.amount_requested, currency: invoice.currency, created: Math.floor(Date.now() / 1000), ...overrides,
  });

  it('a full pay flow: hosted page, signed webhook, 10 replays and an out-of-order failure credit once; invoiceUpdated is delivered', async () => {
    const account = await accepted();
    const client = createClient({ url: gw.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, connectionParams: { sessionToken: account.token }, retryAttempts: 0, lazy: true });
    try {
      const iterator = client.iterate<{ invoiceUpdated: { id: string; status: string; usdCredit: string; bonusUsd: string } }>({
        query: 'subscription { invoiceUpdated { id status usdCredit bonusUsd } }',
      });
      const first = iterator.next();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const invoice = await checkoutInvoice(account, '100');
      expect(invoice.bonus_usd).toBe('5');
      // The test plays the hosted page: it reads the invoice from payment_url and confirms it.
      const page = new URL(invoice.payment_url);
      expect(page.searchParams.get('invoice')).toBe(invoice.id);
      expect(page.searchParams.get('amount')).toBe('9234.56');
      const event = paidEvent(invoice, { amount: page.searchParams.get('amount'), currency: page.searchParams.get('currency') });
      const paid = await webhook(event);
      expect(paid.status, paid.text).toBe(200);
      expect(paid.body.outcome).toBe('applied');

      const seen: string[] = [];
      let step = await first;
      while (!step.done) {
        expect(step.value.data!.invoiceUpdated.id).toBe(invoice.id);
        seen.push(step.value.data!.invoiceUpdated.status);
        if (step.value.data!.invoiceUpdated.status === 'paid') {
          expect(step.value.data!.invoiceUpdated).toMatchObject({ usdCredit: '100', bonusUsd: '5' });
          break;
        }
        step = await iterator.next();
      }
      await iterator.return?.();
      expect(seen).toEqual(['pending', 'paid']);

      const replays = await Promise.all(Array.from({ length: 10 }, () => webhook(event)));
      for (const replay of replays) expect(replay.status).toBe(200);
      const failed = await webhook(paidEvent(invoice, { type: 'invoice.failed' }));
      expect(failed.status).toBe(200);
      expect(failed.body.outcome).toBe('ignored');
      // A different event id confirming the same invoice is also credited nothing.
      expect((await webhook(paidEvent(invoice))).body.outcome).toBe('ignored');

      const got = await http(gw.url, 'GET', `/payments/invoices/${invoice.id}`, { token: account.token });
      expect(got.body).toMatchObject({ status: 'paid', usd_credit: '100', bonus_usd: '5' });
      expect(got.body.paid_at).not.toBeNull();
      expect(await balances(account.userId)).toMatchObject({ paid: 100, bonus: 5 });
      const rows = await gw.db.query('select kind, amount_usd::text from transactions where user_id = $1 order by kind', [account.userId]);
      expect(rows.map((r) => [r.kind, Number(r.amount_usd)])).toEqual([['bonus', 5], ['topup', 100]]);
      const grants = await gw.db.query('select amount::text, expires_at from bonus_grants where user_id = $1', [account.userId]);
      expect(grants).toHaveLength(1);
      expect(new Date(grants[0]!.expires_at).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
      const config = await http(gw.url, 'GET', '/payments/config', { token: account.token });
      expect(config.body).toMatchObject({ paid_balance_usd: '100', bonus_balance_usd: '5', next_bonus_expiry: new Date(grants[0]!.expires_at).toISOString() });
      await expectLedgerConsistent(account.userId);
    } finally {
      await client.dispose();
    }
  });

  it('forged, stale and mismatched events credit nothing and are recorded', async () => {
    const account = await accepted();
    const invoice = await checkoutInvoice(account, '20');
    // Well past the 300 s tolerance both ways, so a second ticking over mid-test cannot bring either back inside it.
    const stale = Math.floor(Date.now() / 1000) - 400;
    const cases: [string, Promise<Awaited<ReturnType<typeof webhook>>>][] = [
      ['unsigned', webhook(paidEvent(invoice), null)],
      ['bad_signature', webhook(paidEvent(invoice), (raw) => sign(raw, 'wrong-secret'))],
      ['bad_signature', webhook(paidEvent(invoice), (raw) => sign(raw).replace(/v1=.{4}/, 'v1=0000'))],
      ['unsigned', webhook(paidEvent(invoice), 'v1=abc')],
      ['stale', webhook(paidEvent(invoice), (raw) => sign(raw, SECRET, stale))],
      ['stale', webhook(paidEvent(invoice), (raw) => sign(raw, SECRET, stale + 800))],
      ['amount_mismatch', webhook(paidEvent(invoice, { amount: '1' }))],
      ['currency_mismatch', webhook(paidEvent(invoice, { currency: 'USD' }))],
      ['unknown_invoice', webhook(paidEvent(invoice, { invoice_id: UNKNOWN_ID }))],
      ['malformed', webhook({ hello: 'world' })],
    ];
    for (const [outcome, promise] of cases) {
      const response = await promise;
      expect(response.status, outcome).toBe(400);
      expect(response.body.code).toBe('invalid_event');
      expect(response.text).not.toContain(SECRET);
    }
    const recorded = await gw.db.query<{ outcome: string }>('select outcome from payment_events where invoice_id = $1 or invoice_id is null or invoice_id = $2', [invoice.id, UNKNOWN_ID]);
    for (const [outcome] of cases) expect(recorded.map((r) => r.outcome)).toContain(outcome);
    expect((await http(gw.url, 'GET', `/payments/invoices/${invoice.id}`, { token: account.token })).body.status).toBe('pending');
    expect(await balances(account.userId)).toMatchObject({ paid: 0, bonus: 0 });
    // A forged event cannot poison a real one with the same id.
    const real = paidEvent(invoice);
    await webhook(real, null);
    expect((await webhook(real)).body.outcome).toBe('applied');
    expect(await balances(account.userId)).toMatchObject({ paid: 20, bonus: 0 });
    await expectLedgerConsistent(account.userId);
  });

  it('invoice.failed on a pending invoice fails it; a later paid event still credits once', async () => {
    const account = await accepted();
    const invoice = await checkoutInvoice(account, '10');
    expect((await webhook(paidEvent(invoice, { type: 'invoice.failed' }))).body.outcome).toBe('applied');
    expect((await http(gw.url, 'GET', `/payments/invoices/${invoice.id}`, { token: account.token })).body.status).toBe('failed');
    const event = paidEvent(invoice);
    const results = await Promise.all([webhook(event), webhook(paidEvent(invoice)), webhook(event)]);
    expect(results.filter((r) => r.body.outcome === 'applied')).toHaveLength(1);
    expect(await balances(account.userId)).toMatchObject({ paid: 10 });
    await expectLedgerConsistent(account.userId);
  });

  it('a manual invoice cannot be confirmed through the checkout webhook', async () => {
    const account = await accepted();
    const invoice = (await createInvoice(account, { amount_usd: 10, method: 'usd_manual' })).body;
    expect((await webhook(paidEvent(invoice))).status).toBe(400);
    expect(await balances(account.userId)).toMatchObject({ paid: 0 });
  });
});

describe('manual provider', () => {
  const MARK = `mutation ($id: ID!, $reference: String) { markInvoicePaid(id: $id, reference: $reference) { id status usdCredit bonusUsd paidAt } }`;

  it('an admin marks an invoice paid over GraphQL, once; non-admins are FORBIDDEN', async () => {
    const admin = await newAdmin(gw);
    const account = await accepted();
    const invoice = (await createInvoice(account, { amount_usd: '500', method: 'usd_manual' })).body;

    const denied = await gql(MARK, { id: invoice.id }, account.token);
    expect(denied.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const trpcDenied = await trpcClient(gw.url, account.token).payments.markInvoicePaid.mutate({ id: invoice.id }).catch((e: unknown) => e);
    expect(trpcDenied).toBeInstanceOf(TRPCClientError);
    expect((trpcDenied as TRPCClientError<any>).data.code).toBe('FORBIDDEN');
    expect(await balances(account.userId)).toMatchObject({ paid: 0, bonus: 0 });

    const marked = await gql(MARK, { id: invoice.id, reference: 'bank-ref-1' }, admin.token);
    expect(marked.errors).toBeUndefined();
    expect(marked.data.markInvoicePaid).toMatchObject({ id: invoice.id, status: 'paid', usdCredit: '500', bonusUsd: '62.5' });
    expect((await gql(MARK, { id: invoice.id }, admin.token)).data.markInvoicePaid.status).toBe('paid');
    expect((await trpcClient(gw.url, admin.token).payments.markInvoicePaid.mutate({ id: invoice.id })).status).toBe('paid');
    expect(await balances(account.userId)).toMatchObject({ paid: 500, bonus: 62.5 });
    expect((await gw.db.query('select provider_ref from invoices where id = $1', [invoice.id]))[0]!.provider_ref).toBe('bank-ref-1');

    expect((await gql(MARK, { id: UNKNOWN_ID }, admin.token)).errors![0]!.extensions!.code).toBe('NOT_FOUND');
    expect((await gql(MARK, { id: 'nope' }, admin.token)).errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    await expectLedgerConsistent(account.userId);
  });
});

describe('GraphQL and tRPC', () => {
  it('paymentConfig, acceptAgreement, createInvoice, invoices and invoice', async () => {
    const account = await newFundedAccount(gw);
    const config = await gql('query { paymentConfig(language: "en") { paymentsEnabled rubPerUsd agreementAccepted agreement { title termsVersion } bonusTiers { minUsd rate } methods { id } } }', {}, account.token);
    expect(config.data.paymentConfig).toMatchObject({ paymentsEnabled: true, rubPerUsd: '92.3456', agreementAccepted: false, agreement: { title: 'Agreement', termsVersion: 't-1' } });
    const refused = await gql('mutation { createInvoice(amountUsd: "10", method: "usd_manual") { id } }', {}, account.token);
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'agreement_required' });
    const acceptedResult = await gql('mutation { acceptAgreement(language: "en", surface: "cabinet") { accepted termsVersion privacyVersion } }', {}, account.token);
    expect(acceptedResult.data.acceptAgreement).toEqual({ accepted: true, termsVersion: 't-1', privacyVersion: 'p-1' });
    const created = await gql('mutation { createInvoice(amountUsd: "150", method: "rub_card") { id amountRequested currency bonusRate bonusUsd paymentUrl status } }', {}, account.token);
    expect(created.data.createInvoice).toMatchObject({ amountRequested: '13851.84', currency: 'RUB', bonusRate: '0.05', bonusUsd: '7.5', status: 'pending' });
    const bad = await gql('mutation { createInvoice(amountUsd: "1e2", method: "rub_card") { id } }', {}, account.token);
    expect(bad.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['amountUsd'] }] });
    const list = await gql('query { invoices(limit: 5) { id } }', {}, account.token);
    expect(list.data.invoices).toEqual([{ id: created.data.createInvoice.id }]);
    expect((await gql(`query { invoice(id: "${UNKNOWN_ID}") { id } }`, {}, account.token)).errors![0]!.extensions!.code).toBe('NOT_FOUND');

    const trpc = trpcClient(gw.url, account.token);
    expect((await trpc.payments.config.query({ language: 'ru' })).agreementAccepted).toBe(true);
    const viaTrpc = await trpc.payments.createInvoice.mutate({ amountUsd: '10', method: 'usd_manual' });
    expect((await trpc.payments.invoice.query({ id: viaTrpc.id })).usdCredit).toBe('10');
    expect((await trpc.payments.invoices.query({ limit: 1 })).map((i) => i.id)).toEqual([viaTrpc.id]);
    const trpcBad = await trpc.payments.createInvoice.mutate({ amountUsd: '10', method: 'zzz' }).catch((e: unknown) => e as TRPCClientError<any>);
    expect((trpcBad as TRPCClientError<any>).data.code).toBe('UNPROCESSABLE_CONTENT');
  });
});

describe('sweepers', () => {
  it('expires pending invoices past their time and publishes nothing for others', async () => {
    const account = await accepted();
    const invoice = (await createInvoice(account, { amount_usd: '10', method: 'rub_card' })).body;
    const later = new Date(Date.now() + 16 * 60_000);
    expect(await gw.services.payments.expireInvoices(new Date(Date.now() + 60_000))).toBe(0);
    expect(await gw.services.payments.expireInvoices(later)).toBeGreaterThanOrEqual(1);
    expect((await http(gw.url, 'GET', `/payments/invoices/${invoice.id}`, { token: account.token })).body.status).toBe('expired');
  });

  it('expires only the unspent remainder of a bonus grant (first in, first out)', async () => {
    const admin = await newAdmin(gw);
    const account = await accepted();
    const invoice = (await createInvoice(account, { amount_usd: '200', method: 'usd_manual' })).body;
    await gw.services.payments.markPaid(admin.actor, invoice.id);
    expect(await balances(account.userId)).toMatchObject({ paid: 200, bonus: 10 });
    // Spend 3.25: bonus goes first.
    await gw.services.billing.post({ userId: account.userId, amountUsd: '-3.25', kind: 'usage', idempotencyKey: `test-spend:${randomUUID()}` });
    expect(await balances(account.userId)).toMatchObject({ paid: 200, bonus: 6.75 });

    expect(await gw.services.payments.expireBonuses(new Date(Date.now() + 29 * 86_400_000))).toBe(0);
    expect(await gw.services.payments.expireBonuses(new Date(Date.now() + 31 * 86_400_000))).toBeGreaterThanOrEqual(1);
    expect(await balances(account.userId)).toMatchObject({ paid: 200, bonus: 0 });
    const [expiry] = await gw.db.query('select amount_usd::text, idempotency_key from transactions where user_id = $1 and kind = $2', [account.userId, 'bonus_expiry']);
    expect(Number(expiry!.amount_usd)).toBe(-6.75);
    expect(expiry!.idempotency_key).toMatch(/^bonus-expiry:/);
    // A second sweep changes nothing.
    await gw.services.payments.expireBonuses(new Date(Date.now() + 32 * 86_400_000));
    expect(await balances(account.userId)).toMatchObject({ paid: 200, bonus: 0 });
    expect((await http(gw.url, 'GET', '/payments/config', { token: account.token })).body.next_bonus_expiry).toBeNull();
    await expectLedgerConsistent(account.userId);
  });

  it('an older grant whose bonus was spent expires nothing while a newer grant keeps its bonus', async () => {
    const admin = await newAdmin(gw);
    const account = await accepted();
    const older = (await createInvoice(account, { amount_usd: '100', method: 'usd_manual' })).body; // bonus 5
    await gw.services.payments.markPaid(admin.actor, older.id);
    const newer = (await createInvoice(account, { amount_usd: '200', method: 'usd_manual' })).body; // bonus 10
    await gw.services.payments.markPaid(admin.actor, newer.id);
    await gw.services.billing.post({ userId: account.userId, amountUsd: '-7', kind: 'usage', idempotencyKey: `test-spend:${randomUUID()}` });
    expect(await balances(account.userId)).toMatchObject({ paid: 300, bonus: 8 });
    // Only the older grant is due: it was spent entirely (8 left < the newer grant's 10).
    await gw.db.query(`update bonus_grants set expires_at = now() - interval '1 second' where invoice_id = $1`, [older.id]);
    expect(await gw.services.payments.expireBonuses()).toBe(1);
    expect(await balances(account.userId)).toMatchObject({ paid: 300, bonus: 8 });
    expect(await gw.db.query('select 1 from transactions where user_id = $1 and kind = $2', [account.userId, 'bonus_expiry'])).toHaveLength(0);
    await gw.db.query(`update bonus_grants set expires_at = now() - interval '1 second' where invoice_id = $1`, [newer.id]);
    expect(await gw.services.payments.expireBonuses()).toBe(1);
    expect(await balances(account.userId)).toMatchObject({ paid: 300, bonus: 0 });
    await expectLedgerConsistent(account.userId);
  });
});

describe('configuration', () => {
  it('a checkout method without its secret variable is a clear boot error naming it', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', BAIKAL_CONFIG: configFile })).toThrow(/TEST_CHECKOUT_SECRET/);
  });

  it('works with no payments section: defaults', () => {
    const config = loadConfig({ NODE_ENV: 'test' });
    expect(config.payments.enabled).toBe(true);
    expect(config.payments.methods.length).toBeGreaterThan(0);
    expect(config.payments.checkoutSecret).toBeNull();
  });
});
