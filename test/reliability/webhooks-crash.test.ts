import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRest } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { spawnGateway, type ServerProcess } from '../helpers/process.js';
import { createEndpoint, gql, startReceiver } from '../helpers/webhooks.js';
import { waitFor } from '../helpers/reliability.js';

/**
 * Webhooks survive a SIGKILL (docs/webhooks.md, Queue): 60 events queued to a slow receiver (250 ms an
 * answer), the gateway killed mid-way, a new one started on the same database. Deliveries the dead process
 * held come back when their lease (2 s here) ends; every event arrives, verified, and after de-duplication
 * by webhook-id none is missing. Duplicates (the in-flight ones) are allowed: delivery is at least once.
 */
const EVENTS = 60;
const LEASE_SECONDS = 2;
let db: TestDatabase;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const gateways: ServerProcess[] = [];

const env = () => ({
  DATABASE_URL: db.url,
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  STATUS_PROBE_SECONDS: '0',
  WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
  WEBHOOKS_WORKERS: '2',
  WEBHOOKS_POLL_MS: '50',
  WEBHOOKS_LEASE_SECONDS: String(LEASE_SECONDS),
  WEBHOOKS_RETRY_BASE_MS: '50',
});

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startReceiver(() => ({ status: 200, delayMs: 250 }));
});
afterAll(async () => {
  for (const gateway of gateways) if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
  await Promise.all(gateways.map((g) => g.exited));
  await receiver?.close();
  await db?.drop();
});

describe('SIGKILL of the gateway mid-delivery', () => {
  it('loses no webhook: after a restart every event arrives (de-duplicated by webhook-id)', { timeout: 120_000 }, async () => {
    const first = await spawnGateway(env());
    gateways.push(first);
    const account = await registerRest(first.url);
    const endpoint = await createEndpoint(first.url, account.token, { url: receiver.url, eventTypes: ['webhook.test'] });
    receiver.secrets.push(endpoint.secret);
    for (let i = 0; i < EVENTS; i++) {
      const sent = await gql(first.url, account.token, 'mutation($id: ID!) { sendTestWebhook(endpointId: $id) }', { id: endpoint.id });
      expect(sent.errors).toBeUndefined();
    }
    await waitFor('a quarter delivered', () => receiver.received.length >= 15, 20_000);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    const atKill = receiver.ids().size;
    const [{ held }] = await db.query<{ held: number }>(`select count(*)::int as held from webhook_deliveries where lease_owner is not null and status = 'pending'`);
    expect(atKill).toBeLessThan(EVENTS);

    const restartedAt = Date.now();
    const second = await spawnGateway(env());
    gateways.push(second);
    const messages = (await db.query<{ id: string }>('select id from webhook_messages')).map((row) => row.id);
    expect(messages).toHaveLength(EVENTS);
    await waitFor('every event after the restart', () => messages.every((id) => receiver.ids().has(id)), 60_000);
    const tookMs = Date.now() - restartedAt;

    expect(receiver.received.every((r) => r.verifiedBy.length === 1)).toBe(true);
    expect(receiver.ids()).toEqual(new Set(messages));
    const duplicates = receiver.received.length - receiver.ids().size;
    await waitFor('every delivery recorded', async () => (await db.query<{ n: number }>(`select count(*)::int as n from webhook_deliveries where status <> 'delivered'`))[0]!.n === 0, 20_000);
    console.log(`webhooks SIGKILL: ${atKill}/${EVENTS} received at the kill, ${held} leases held by the dead process, all ${EVENTS} received ${tookMs} ms after the restart, ${duplicates} duplicate(s)`);
  });
});
