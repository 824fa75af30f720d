import { createHmac, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ledgerBalance, newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from '../helpers/config.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * The checkout webhook is the only way money enters from outside. Random forgeries (wrong secret,
 * flipped bytes, stale or future timestamps, mismatched amounts, currencies and invoices, garbage
 * headers) credit nothing; the genuine event, replayed in parallel, credits exactly once.
 */
const SECRET = `whsec-${randomUUID()}`;
const configFile = operatorConfigFile({
  payments: {
    enabled: true,
    rubPerUsd: '90',
    methods: [{ id: 'rub_card', label: 'Card (RUB)', currency: 'RUB', minUsd: '1', maxUsd: '5000', enabled: true, provider: 'checkout' }],
    checkout: { baseUrl: 'https://pay.example.test/checkout', webhookSecretEnv: 'SECURITY_CHECKOUT_SECRET', toleranceSeconds: 300 },
  },
});
const gw = useTestGateway({ BAIKAL_CONFIG: configFile, SECURITY_CHECKOUT_SECRET: SECRET });
afterAll(() => removeOperatorConfigFile(configFile));

const now = () => Math.floor(Date.now() / 1000);
const sign = (raw: string, secret = SECRET, t = now()) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
const post = (raw: string, signature: string | null) =>
  http(gw.url, 'POST', '/payments/webhooks/checkout', { rawBody: raw, headers: signature === null ? {} : { 'x-checkout-signature': signature } });

type Forgery =
  | { kind: 'wrong-secret'; secret: string }
  | { kind: 'skewed'; seconds: number }
  | { kind: 'mismatch'; field: 'amount' | 'currency' | 'invoice_id'; value: string | number | null }
  | { kind: 'flipped-byte'; index: number; xor: number }
  | { kind: 'garbage-header'; header: string }
  | { kind: 'unsigned' };

const forgery: fc.Arbitrary<Forgery> = fc.oneof(
  fc.record({ kind: fc.constant('wrong-secret' as const), secret: fc.string({ maxLength: 64 }) }),
  // Outside the 300 s tolerance, in the past and in the future.
  fc.record({ kind: fc.constant('skewed' as const), seconds: fc.oneof(fc.integer({ min: 302, max: 10_000_000 }), fc.integer({ min: -10_000_000, max: -302 })) }),
  fc.record({
    kind: fc.constant('mismatch' as const),
    field: fc.constantFrom('amount' as const, 'currency' as const, 'invoice_id' as const),
    value: fc.oneof(fc.string({ maxLength: 40 }), fc.double({ noNaN: true }), fc.constant(null), fc.constantFrom('0', '0.01', '1e9', 'USD', 'rub', '-1', '00000000-0000-4000-8000-000000000000')),
  }),
  fc.record({ kind: fc.constant('flipped-byte' as const), index: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('garbage-header' as const), header: fc.string({ maxLength: 200 }).filter((h) => /^[\x20-\x7e]*$/.test(h)) }),
  fc.record({ kind: fc.constant('unsigned' as const) }),
);

describe('checkout webhook forgeries', () => {
  it('200 random forgeries credit nothing and answer 400 in our shape; the genuine event sent 20 times at once credits once', async () => {
    const account = await newFundedAccount(gw);
    await gw.db.query('update users set email_verified = true where id = $1', [account.userId]);
    expect((await http(gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: {} })).status).toBe(200);
    const created = await http(gw.url, 'POST', '/payments/invoices', { token: account.token, body: { amount_usd: '25', method: 'rub_card' } });
    expect(created.status, created.text).toBe(201);
    const invoice = created.body as { id: string; amount_requested: string; currency: string };
    const genuine = { id: `evt_${randomUUID()}`, type: 'invoice.paid', invoice_id: invoice.id, amount: invoice.amount_requested, currency: invoice.currency, created: now() };

    let tried = 0;
    await fc.assert(
      fc.asyncProperty(forgery, async (f) => {
        const event: Record<string, unknown> = { ...genuine, id: `evt_${randomUUID()}` };
        let raw = JSON.stringify(event);
        let signature: string | null = sign(raw);
        switch (f.kind) {
          case 'wrong-secret':
            fc.pre(f.secret !== SECRET);
            signature = sign(raw, f.secret);
            break;
          case 'skewed':
            signature = sign(raw, SECRET, now() + f.seconds);
            break;
          case 'mismatch':
            fc.pre(String(f.value) !== String(event[f.field]));
            event[f.field] = f.value;
            raw = JSON.stringify(event);
            signature = sign(raw);
            break;
          case 'flipped-byte': {
            // Signed, then altered in transit.
            const bytes = Buffer.from(raw);
            bytes[f.index % bytes.length]! ^= f.xor;
            raw = bytes.toString('latin1');
            break;
          }
          case 'garbage-header':
            signature = f.header;
            break;
          case 'unsigned':
            signature = null;
            break;
        }
        tried += 1;
        const response = await post(raw, signature);
        expect(response.status, `${JSON.stringify(f)} -> ${response.text}`).toBe(400);
        expect(response.body.code).toBe('invalid_event');
        expect(response.text).not.toContain(SECRET);
      }),
      { numRuns: 200 },
    );
    expect(tried).toBeGreaterThan(150);
    // 36 characters of hex and dashes that are not a UUID (one flipped byte can make them): refused, never a 500.
    for (const invoiceId of ['-6e34313-0b5f-4f65-bd4d-711a708307e7', 'b6e34313b0b5f-4f65-bd4d-711a708307e7', '-'.repeat(36), 'f'.repeat(36)]) {
      const raw = JSON.stringify({ ...genuine, id: `evt_${randomUUID()}`, invoice_id: invoiceId });
      for (const signature of [sign(raw), sign(JSON.stringify(genuine))]) {
        const response = await post(raw, signature);
        expect([invoiceId, response.status, response.body.code]).toEqual([invoiceId, 400, 'invalid_event']);
      }
    }
    const [before] = await gw.db.query<{ status: string; paid: string }>('select i.status, u.balance_paid_usd::text as paid from invoices i join users u on u.id = i.user_id where i.id = $1', [invoice.id]);
    expect(before!.status).toBe('pending');
    expect(Number(before!.paid)).toBe(0);

    const raw = JSON.stringify(genuine);
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(raw, sign(raw))));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(replies.filter((r) => r.body.outcome === 'applied')).toHaveLength(1);
    const credits = await gw.db.query<{ amount: string }>("select amount_usd::text as amount from transactions where user_id = $1 and kind = 'topup'", [account.userId]);
    expect(credits.map((c) => Number(c.amount))).toEqual([25]);
    const ledger = await ledgerBalance(gw, account.userId);
    expect(ledger.paidMatches && ledger.bonusMatches).toBe(true);
    expect(Number(ledger.balance)).toBe(25);
  });
});
