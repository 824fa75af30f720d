import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { newAdmin } from '../helpers/accounts.js';
import { http, trpcClient } from '../helpers/clients.js';
import { INVOICE_FIELDS, newFundedAccount, UNKNOWN_ID, usePaymentsGateway } from '../helpers/payments.js';

/** Payments (SPEC.md 4.4) as a customer meets them: the config, the agreement, invoices; settling them is in payments-settlement.test.ts. */
const { gw, configFile, gql, accepted, createInvoice } = usePaymentsGateway();

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
