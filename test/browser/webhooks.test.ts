import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, launchChromium, requireChromium, signIn } from '../helpers/browser.js';
import { newAccountInput, registerRest } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { spawnGateway, type ServerProcess } from '../helpers/process.js';
import { startReceiver } from '../helpers/webhooks.js';
import { waitFor } from '../helpers/reliability.js';

/**
 * The webhooks page in a real Chromium against the built gateway: an endpoint created on the page (its secret
 * shown once), a test event sent from it and shown delivered, then replayed: the receiver sees the same
 * webhook-id twice, both verified with the secret the page showed.
 */
describe('the webhooks page in Chromium', () => {
  let db: TestDatabase;
  let dataDir: string;
  let gateway: ServerProcess;
  let browser: Browser;
  let page: Page;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    requireChromium();
    db = await createTestDatabase();
    dataDir = await mkdtemp(`${tmpdir()}/baikal-webhooks-`);
    receiver = await startReceiver();
    gateway = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'info', STATUS_PROBE_SECONDS: '0', WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOKS_POLL_MS: '100' });
    browser = await launchChromium();
    page = await (await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
    await mkdir(SCREENSHOTS, { recursive: true });
    const input = newAccountInput('hooks');
    await registerRest(gateway.url, input);
    await signIn(page, gateway.url, input.username, input.password);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await receiver?.close();
    await db?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates an endpoint, shows a delivered test event and replays it with the same webhook-id', async () => {
    await page.goto(`${gateway.url}/app/webhooks`);
    await page.locator('main h1').first().waitFor();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('checkbox', { name: /webhook\.test/ }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    receiver.secrets.push(secret);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await expect.poll(() => page.getByTestId('webhook-secret').count()).toBe(0);

    await page.getByRole('button', { name: 'Send test event' }).click();
    await waitFor('the test event', () => receiver.received.length === 1, 20_000);
    const row = page.locator('tr[data-delivery]').first();
    await row.getByText('delivered').waitFor({ timeout: 15_000 });
    await expect.poll(() => row.textContent()).toContain(receiver.received[0]!.id);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'webhooks-en.png'), fullPage: true });

    await row.getByRole('button', { name: 'Replay' }).click();
    await waitFor('the replay', () => receiver.received.length === 2, 20_000);
    const [first, again] = receiver.received;
    expect(again!.id).toBe(first!.id);
    expect(first!.verifiedBy).toEqual([0]);
    expect(again!.verifiedBy).toEqual([0]);
    await expect.poll(() => page.locator('tr[data-delivery]').count(), { timeout: 10_000 }).toBe(2);
    expect(consoleErrors).toEqual([]);
  });
});
