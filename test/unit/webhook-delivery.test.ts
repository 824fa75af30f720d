import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { deliver, DEFAULT_DELIVER_LIMITS } from '../../src/events/webhooks/deliver.js';
import { checkUrlForm, isForbiddenAddress } from '../../src/events/webhooks/url-policy.js';
import { RETRY_STEPS, retryDelayMs, signatureHeader } from '../../src/events/webhooks/webhook-worker.js';

/** The webhook delivery's pure parts and its HTTP client against a local server (docs/webhooks.md). */
let port: number;
const seen: { host: string | undefined; bytes: number }[] = [];
const server = createServer((req, res) => {
  seen.push({ host: req.headers.host, bytes: Number(req.headers['content-length']) });
  if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2_000);
  if (req.url === '/big') return void res.end('x'.repeat(200_000));
  res.writeHead(200).end('fine');
});
beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => ((port = (server.address() as AddressInfo).port), resolve()))));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the URL policy', () => {
  it.each(['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', 'ff02::1', '::ffff:10.0.0.1', '64:ff9b::a00:1'])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });
  it.each(['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
  it('refuses plain http, credentials and overlong URLs; the operator setting allows http and local hosts', () => {
    expect(() => checkUrlForm('http://example.com/', false)).toThrow(/https/);
    expect(() => checkUrlForm('https://a:b@example.com/', true)).toThrow(/credentials/);
    expect(() => checkUrlForm(`https://example.com/${'a'.repeat(2_100)}`, false)).toThrow(/2048/);
    expect(checkUrlForm('http://127.0.0.1:9/x', true).port).toBe('9');
  });
});

describe('the retry schedule', () => {
  it('spans more than a day in production and milliseconds with a small unit; jitter stays within 20%', () => {
    const total = RETRY_STEPS.reduce((sum, _, i) => sum + retryDelayMs(i + 1, 5_000, () => 0.5)!, 0);
    expect(total).toBeGreaterThan(86_400_000);
    expect(retryDelayMs(1, 5_000, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(1, 5_000, () => 0)).toBe(4_000);
    expect(retryDelayMs(1, 5_000, () => 1)).toBe(6_000);
    expect(retryDelayMs(RETRY_STEPS.length + 1, 5_000)).toBeNull();
    expect(retryDelayMs(2, 10, () => 0.5)).toBe(600);
  });
});

describe('signing', () => {
  it('signs with the standardwebhooks library; during a rotation both secrets verify', () => {
    const older = `whsec_${Buffer.from('o'.repeat(32)).toString('base64')}`;
    const newer = `whsec_${Buffer.from('n'.repeat(32)).toString('base64')}`;
    const at = new Date();
    const body = JSON.stringify({ type: 'webhook.test', timestamp: at.toISOString(), data: {} });
    const header = signatureHeader({ message_id: 'msg_1', secret: newer, previous_secret: older, previous_secret_until: new Date(Date.now() + 60_000) }, at, body);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': header };
    expect(() => new Webhook(newer).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(older).verify(body, headers)).not.toThrow();
    const after = signatureHeader({ message_id: 'msg_1', secret: newer, previous_secret: older, previous_secret_until: new Date(at.getTime() - 1) }, at, body);
    expect(() => new Webhook(older).verify(body, { ...headers, 'webhook-signature': after })).toThrow();
  });
});

describe('one attempt', () => {
  const limits = { ...DEFAULT_DELIVER_LIMITS, allowInsecure: true };

  it('connects to the address it resolved and checked, whatever the name (DNS rebinding cannot move it)', async () => {
    const result = await deliver(`http://rebind.example.test:${port}/ok`, '{}', {}, { ...limits, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(result).toMatchObject({ ok: true, statusCode: 200, error: null, responseBody: 'fine' });
    expect(seen.at(-1)!.host).toBe(`rebind.example.test:${port}`);
  });

  it('refuses at delivery time a name that now resolves inside', async () => {
    const result = await deliver('https://rebind.example.test/ok', '{}', {}, { ...limits, allowInsecure: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(result).toMatchObject({ ok: false, error: 'forbidden_address', statusCode: null });
  });

  it('times out, reads a bounded answer, and names a refused connection', async () => {
    const slow = await deliver(`http://127.0.0.1:${port}/slow`, '{}', {}, { ...limits, totalMs: 300 });
    expect(slow).toMatchObject({ ok: false, error: 'timeout' });
    expect(slow.durationMs).toBeLessThan(1_000);
    const big = await deliver(`http://127.0.0.1:${port}/big`, '{}', {}, limits);
    expect(big.ok).toBe(true);
    expect(big.responseBody).toHaveLength(1_024);
    const closed = await deliver('http://127.0.0.1:1/', '{}', {}, limits);
    expect(closed).toMatchObject({ ok: false, error: 'connection_refused' });
  });
});
