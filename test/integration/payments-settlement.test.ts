import { randomUUID } from 'node:crypto';
import { TRPCClientError } from '@trpc/client';
import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { newAdmin } from '../helpers/accounts.js';
import { http, trpcClient } from '../helpers/clients.js';
import { type Account, UNKNOWN_ID, usePaymentsGateway } from '../helpers/payments.js';

/** Invoices settled: the checkout provider's signed webhooks, the manual provider's admin confirmation, and the sweepers. */
const { gw, secret: SECRET, gql, accepted, createInvoice, sign, webhook, balances, expectLedgerConsistent } = usePaymentsGateway();

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

