import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { WebhooksService } from '../../src/events/webhooks/webhooks.service.js';
import { createLogger } from '../../src/shared/logging.js';
import { DomainError } from '../../src/shared/errors.js';
import { newAdmin } from '../helpers/accounts.js';
import { http, trpcClient } from '../helpers/clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from '../helpers/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { newFundedAccount, PAYMENTS } from '../helpers/payments.js';
import { createEndpoint, DELIVERY_FIELDS, ENDPOINT_FIELDS, gql, startReceiver, startSmtp } from '../helpers/webhooks.js';
import { waitFor } from '../helpers/reliability.js';

/**
 * Outbound webhooks end to end on a real gateway, PostgreSQL, SMTP server and HTTP receivers (docs/webhooks.md).
 * Insecure URLs are allowed by the operator setting so receivers can listen on 127.0.0.1; the retry unit is
 * 30 ms (attempts at 0, 30 ms, 1.8 s, ...) and an endpoint failing for 1.5 s is disabled.
 */
const DISABLE_AFTER_MS = 1_500;
let gw: TestGateway;
let smtp: Awaited<ReturnType<typeof startSmtp>>;
const configFile = operatorConfigFile({ payments: PAYMENTS });

beforeAll(async () => {
  smtp = await startSmtp();
  gw = await startTestGateway({
    SMTP_URL: smtp.url,
    BAIKAL_CONFIG: configFile,
    TEST_CHECKOUT_SECRET: 'checkout-secret-for-webhooks-test',
    WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
    WEBHOOKS_POLL_MS: '50',
    WEBHOOKS_RETRY_BASE_MS: '30',
    WEBHOOKS_DISABLE_AFTER_DAYS: String(DISABLE_AFTER_MS / 86_400_000),
  });
});
afterAll(async () => {
  await gw?.close();
  await smtp?.close();
  removeOperatorConfigFile(configFile);
});

const gq = (token: string, query: string, variables: Record<string, unknown> = {}) => gql(gw.url, token, query, variables);
const deliveries = async (token: string, endpointId: string) => (await gq(token, `query($id: ID!) { webhookDeliveries(endpointId: $id) { ${DELIVERY_FIELDS} } }`, { id: endpointId })).data.webhookDeliveries as any[];

describe('webhook events', () => {
  it('delivers invoice paid, key created, key revoked and a test event, each verified by Webhook.verify', async () => {
    const receiver = await startReceiver();
    const account = await newFundedAccount(gw);
    const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['invoice.paid', 'key.created', 'key.revoked'], description: 'all of them' });
    expect(endpoint.secret).toMatch(/^whsec_/);
    receiver.secrets.push(endpoint.secret);

    const created = await gq(account.token, 'mutation { createKey(input: { label: "hooked" }) { id label } }');
    const keyId = created.data.createKey.id;
    await gq(account.token, 'mutation($id: ID!) { revokeKey(id: $id) }', { id: keyId });
    expect((await http(gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: {} })).status).toBe(200);
    const invoice = (await http(gw.url, 'POST', '/payments/invoices', { token: account.token, body: { amount_usd: 10, method: 'usd_manual' } })).body;
    const admin = await newAdmin(gw);
    await gw.services.payments.markPaid(admin.actor, invoice.id);
    const test = await gq(account.token, 'mutation($id: ID!) { sendTestWebhook(endpointId: $id) }', { id: endpoint.id });
    expect(test.data.sendTestWebhook).toMatch(/^msg_/);

    await waitFor('four deliveries', () => receiver.received.length >= 4, 20_000);
    const byType = Object.fromEntries(receiver.received.map((r) => [r.body.type, r]));
    expect(Object.keys(byType).sort()).toEqual(['invoice.paid', 'key.created', 'key.revoked', 'webhook.test']);
    for (const r of receiver.received) {
      expect(r.verifiedBy, `signature of ${r.body.type}`).toEqual([0]);
      expect(Date.parse(r.body.timestamp)).not.toBeNaN();
    }
    expect(byType['key.created']!.body.data.key).toMatchObject({ id: keyId, label: 'hooked' });
    expect(JSON.stringify(byType['key.created']!.body)).not.toMatch(/sk-|key_hash|keyHash/);
    expect(byType['key.revoked']!.body.data.key.id).toBe(keyId);
    expect(byType['invoice.paid']!.body.data.invoice).toMatchObject({ id: invoice.id, status: 'paid' });
    expect(byType['webhook.test']!.id).toBe(test.data.sendTestWebhook);

    // A revoked-key event of another account never reaches this endpoint; its ids are NOT_FOUND here.
    const other = await newFundedAccount(gw);
    const foreign = await gq(other.token, `query($id: ID!) { webhookDeliveries(endpointId: $id) { id } }`, { id: endpoint.id });
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const replayForeign = await gq(other.token, 'mutation($id: ID!) { replayWebhookDelivery(deliveryId: $id) { id } }', { id: (await deliveries(account.token, endpoint.id))[0].id });
    expect(replayForeign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await receiver.close();
  });

  it('retries a receiver that answers 500 for a while: every event arrives, once per webhook-id after de-duplication', async () => {
    let up = false;
    const receiver = await startReceiver(() => (up ? 200 : 500));
    const account = await newFundedAccount(gw);
    const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['key.created'] });
    receiver.secrets.push(endpoint.secret);
    for (let i = 0; i < 5; i++) await gq(account.token, 'mutation { createKey { id } }');
    for (let i = 0; i < 3; i++) await gq(account.token, 'mutation($id: ID!) { sendTestWebhook(endpointId: $id) }', { id: endpoint.id });

    const [{ n }] = await gw.db.query<{ n: string }>('select count(*) as n from webhook_messages where user_id = $1', [account.userId]);
    expect(Number(n)).toBe(8);
    // Down until every delivery has failed at least once, then back.
    await waitFor('every delivery failed once', async () => (await deliveries(account.token, endpoint.id)).every((d) => d.lastStatusCode === 500 && d.lastError === 'status'), 20_000);
    up = true;
    await waitFor('all delivered', async () => (await deliveries(account.token, endpoint.id)).every((d) => d.status === 'delivered'), 20_000);
    const list = await deliveries(account.token, endpoint.id);
    const messageIds = new Set(list.map((d) => d.messageId));
    expect(messageIds.size).toBe(8);
    const accepted = receiver.received.filter((r) => r.status === 200);
    expect(new Set(accepted.map((r) => r.id))).toEqual(messageIds);
    expect(accepted).toHaveLength(8); // delivered: no retry after a 2xx
    expect(receiver.received.every((r) => r.verifiedBy.length === 1)).toBe(true);
    expect(list.every((d) => d.attempts >= 2 && d.lastStatusCode === 200)).toBe(true);
    await receiver.close();
  });

  it('retries a receiver whose server is closed (connections refused) for a while and then listens again on its port', async () => {
    const receiver = await startReceiver();
    const account = await newFundedAccount(gw);
    const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['key.created'] });
    receiver.secrets.push(endpoint.secret);
    await receiver.close(); // nothing listens on the port now: every connection is refused
    for (let i = 0; i < 5; i++) await gq(account.token, 'mutation { createKey { id } }');
    for (let i = 0; i < 3; i++) await gq(account.token, 'mutation($id: ID!) { sendTestWebhook(endpointId: $id) }', { id: endpoint.id });

    // Down until every delivery has been refused twice (the first attempt and the 30 ms retry), well before
    // the 1.5 s after which a failing endpoint is disabled; then the same server listens on the same port.
    await waitFor('every delivery refused twice', async () => (await deliveries(account.token, endpoint.id)).every((d) => d.attempts >= 2 && d.lastError === 'connection_refused' && d.lastStatusCode === null), 20_000);
    expect(receiver.received).toHaveLength(0);
    await new Promise<void>((resolve, reject) => receiver.server.once('error', reject).listen(receiver.port, '127.0.0.1', () => resolve()));
    await waitFor('all delivered', async () => (await deliveries(account.token, endpoint.id)).every((d) => d.status === 'delivered'), 20_000);

    const list = await deliveries(account.token, endpoint.id);
    expect(list).toHaveLength(8);
    const messageIds = new Set(list.map((d) => d.messageId));
    expect(messageIds.size).toBe(8);
    // Every event arrived after the receiver came back; de-duplicated by webhook-id, each exactly once.
    const unique = new Map(receiver.received.map((r) => [r.id, r]));
    expect(new Set(unique.keys())).toEqual(messageIds);
    expect([...unique.values()].map((r) => r.body.type).sort()).toEqual([...Array(5).fill('key.created'), ...Array(3).fill('webhook.test')]);
    expect(receiver.received.every((r) => r.verifiedBy.length === 1 && r.verifiedBy[0] === 0)).toBe(true);
    expect(list.every((d) => d.attempts >= 3 && d.lastStatusCode === 204 && d.lastError === null)).toBe(true);
    const [state] = (await gq(account.token, `{ webhookEndpoints { ${ENDPOINT_FIELDS} } }`)).data.webhookEndpoints;
    expect(state).toMatchObject({ enabled: true, disabledReason: null });
    await receiver.close();
  });

  it('replays a delivery with the same webhook-id; a rotated secret signs, and the old one too during the grace period', async () => {
    const receiver = await startReceiver();
    const account = await newFundedAccount(gw);
    const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['key.created'] });
    receiver.secrets.push(endpoint.secret);
    await gq(account.token, 'mutation { createKey { id } }');
    await waitFor('the first delivery', () => receiver.received.length === 1, 20_000);
    const [first] = await deliveries(account.token, endpoint.id);
    await waitFor('delivered', async () => (await deliveries(account.token, endpoint.id))[0].status === 'delivered', 20_000);

    const rotated = await gq(account.token, `mutation($id: ID!) { rotateWebhookSecret(id: $id) { ${ENDPOINT_FIELDS} secret } }`, { id: endpoint.id });
    const newSecret = rotated.data.rotateWebhookSecret.secret as string;
    expect(newSecret).not.toBe(endpoint.secret);
    expect(rotated.data.rotateWebhookSecret.previousSecretExpiresAt).toBeTruthy();
    receiver.secrets.push(newSecret);

    const replay = await gq(account.token, `mutation($id: ID!) { replayWebhookDelivery(deliveryId: $id) { ${DELIVERY_FIELDS} } }`, { id: first.id });
    expect(replay.data.replayWebhookDelivery.messageId).toBe(first.messageId);
    await waitFor('the replay', () => receiver.received.length === 2, 20_000);
    const [original, again] = receiver.received;
    expect(again!.id).toBe(original!.id);
    expect(again!.raw).toBe(original!.raw);
    expect(original!.verifiedBy).toEqual([0]);
    // Both secrets verify the replay: the header carries two signatures, space-separated.
    expect(again!.verifiedBy).toEqual([0, 1]);
    expect(again!.signature.split(' ')).toHaveLength(2);
    expect(() => new Webhook(newSecret).verify(again!.raw, { 'webhook-id': again!.id, 'webhook-timestamp': again!.timestamp, 'webhook-signature': again!.signature })).not.toThrow();
    await receiver.close();
  });

  it('counts a redirect as a failure and records the status, error class and duration', async () => {
    const receiver = await startReceiver(() => ({ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } }));
    const account = await newFundedAccount(gw);
    const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['webhook.test'] });
    await gq(account.token, 'mutation($id: ID!) { sendTestWebhook(endpointId: $id) }', { id: endpoint.id });
    const [delivery] = await waitFor('an attempt', async () => {
      const list = await deliveries(account.token, endpoint.id);
      return list[0]?.attempts >= 1 && list[0]?.lastStatusCode ? list : null;
    }, 20_000);
    expect(delivery).toMatchObject({ status: 'pending', lastStatusCode: 302, lastError: 'redirect', lastResponseBody: 'receiver says no' });
    expect(delivery.lastDurationMs).toBeGreaterThanOrEqual(0);
    await gq(account.token, 'mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }', { id: endpoint.id });
    await receiver.close();
  });

  it('disables an endpoint that keeps failing and e-mails its owner', async () => {
    const receiver = await startReceiver(() => 500);
    const account = await newFundedAccount(gw);
    const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['webhook.test'], language: 'en' });
    await gq(account.token, 'mutation($id: ID!) { sendTestWebhook(endpointId: $id) }', { id: endpoint.id });
    const disabled = await waitFor('the endpoint disabled', async () => {
      const list = (await gq(account.token, `{ webhookEndpoints { ${ENDPOINT_FIELDS} } }`)).data.webhookEndpoints;
      return list[0].enabled ? null : list[0];
    }, 15_000);
    expect(disabled.disabledReason).toBe('failing');
    const mail = await waitFor('the owner e-mail', () => smtp.delivered.find((m) => m.to.includes(account.input.email.toLowerCase()) && /webhook endpoint disabled/.test(m.raw)), 20_000);
    expect(mail.raw).toContain('127.0.0.1');
    // Re-enabling is the owner's action and clears the reason.
    const enabled = await gq(account.token, `mutation($input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(input: $input) { ${ENDPOINT_FIELDS} } }`, { input: { id: endpoint.id, enabled: true } });
    expect(enabled.data.updateWebhookEndpoint).toMatchObject({ enabled: true, disabledReason: null });
    await gq(account.token, 'mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }', { id: endpoint.id });
    await receiver.close();
  });
});

describe('webhook URL rules', () => {
  const strict = () =>
    new WebhooksService({ orm: gw.database.orm, log: createLogger('silent'), settings: { ...gw.config.webhooks, allowInsecureUrls: false } });

  it.each([
    ['http://example.com/hook', /https/],
    ['https://127.0.0.1/hook', /private, local or reserved/],
    ['https://10.1.2.3/hook', /private, local or reserved/],
    ['https://169.254.169.254/latest/meta-data', /private, local or reserved/],
    ['https://[::1]/hook', /private, local or reserved/],
    ['https://[fd00:ec2::254]/hook', /private, local or reserved/],
    ['https://100.64.0.1/hook', /private, local or reserved/],
    ['https://localhost/hook', /not reachable from the internet/],
    ['https://metadata.google.internal/computeMetadata/v1', /not reachable from the internet/],
    ['https://user:pass@example.com/hook', /credentials/],
    ['not a url', /valid URL/],
  ])('refuses %s with its reason', async (url, reason) => {
    const account = await newFundedAccount(gw);
    const error = await strict().create(account.actor, { url, eventTypes: ['webhook.test'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).issues[0]).toMatchObject({ loc: ['url'] });
    expect((error as DomainError).issues[0]!.msg).toMatch(reason);
  });

  it('refuses a name that resolves to a loopback or private address (checked after DNS, every address)', async () => {
    const account = await newFundedAccount(gw);
    const dns = (addresses: string[]) => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    for (const addresses of [['127.0.0.1'], ['93.184.215.14', '10.0.0.7'], ['::1'], ['::ffff:169.254.169.254']]) {
      const service = new WebhooksService({ orm: gw.database.orm, log: createLogger('silent'), settings: { ...gw.config.webhooks, allowInsecureUrls: false }, resolve: dns(addresses) });
      const error = (await service.create(account.actor, { url: 'https://hooks.example.test/in', eventTypes: ['webhook.test'] }).catch((e: unknown) => e)) as DomainError;
      expect(error.issues[0], addresses.join()).toMatchObject({ loc: ['url'], msg: 'The host hooks.example.test resolves to a private, local or reserved address' });
    }
    const unresolvable = new WebhooksService({ orm: gw.database.orm, log: createLogger('silent'), settings: { ...gw.config.webhooks, allowInsecureUrls: false }, resolve: async () => { throw new Error('ENOTFOUND'); } });
    const error = (await unresolvable.create(account.actor, { url: 'https://nowhere.example.test/', eventTypes: ['webhook.test'] }).catch((e: unknown) => e)) as DomainError;
    expect(error.issues[0]!.msg).toBe('The host nowhere.example.test could not be resolved');
  });

  it('answers BAD_USER_INPUT through GraphQL, naming the field; unknown event types too', async () => {
    const account = await newFundedAccount(gw);
    const bad = await gq(account.token, 'mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }', { input: { url: 'https://user:pass@example.com/', eventTypes: ['webhook.test'] } });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0]?.extensions?.issues?.[0]).toMatchObject({ loc: ['url'] });
    const types = await gq(account.token, 'mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }', { input: { url: 'https://example.com/', eventTypes: ['nope'] } });
    expect(types.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(types.errors?.[0]?.extensions?.issues?.[0]?.loc).toEqual(['eventTypes', 0]);
  });

  it('limits the endpoints of one account', async () => {
    const account = await newFundedAccount(gw);
    for (let i = 0; i < gw.config.webhooks.maxEndpoints; i++) await createEndpoint(gw.url, account.token, { url: `http://127.0.0.1:9/${i}`, eventTypes: ['webhook.test'] });
    const over = await gq(account.token, 'mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }', { input: { url: 'http://127.0.0.1:9/x', eventTypes: ['webhook.test'] } });
    expect(over.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });

  it('serves the same calls over tRPC, scoped to the account', async () => {
    const account = await newFundedAccount(gw);
    const client = trpcClient(gw.url, account.token);
    expect((await client.webhooks.eventTypes.query()).map((t) => t.type)).toContain('invoice.paid');
    const created = await client.webhooks.create.mutate({ url: 'http://127.0.0.1:9/trpc', eventTypes: ['webhook.test'] });
    expect(created.secret).toMatch(/^whsec_/);
    expect((await client.webhooks.list.query()).map((e) => e.id)).toEqual([created.id]);
    const other = trpcClient(gw.url, (await newFundedAccount(gw)).token);
    await expect(other.webhooks.remove.mutate({ id: created.id })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });
    expect(await client.webhooks.remove.mutate({ id: created.id })).toEqual({ ok: true });
  });
});
