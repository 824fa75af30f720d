import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, launchChromium, requireChromium, signIn } from '../helpers/browser.js';
import { newAccountInput, registerRest } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { spawnGateway, type ServerProcess } from '../helpers/process.js';

/**
 * The alerts page in a real Chromium against the built gateway: a rule, its amount and a key rule saved, shown
 * again after a reload (and stored), a refused amount explained at its field, and what keeps a channel from
 * reaching the account said on the page.
 */
describe('the alerts page in Chromium', () => {
  let db: TestDatabase;
  let dataDir: string;
  let gateway: ServerProcess;
  let browser: Browser;
  let page: Page;
  const input = newAccountInput('alerts');

  beforeAll(async () => {
    requireChromium();
    db = await createTestDatabase();
    dataDir = await mkdtemp(`${tmpdir()}/baikal-alerts-page-`);
    gateway = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'info' });
    const registered = await registerRest(gateway.url, input);
    await db.query('update users set email_verified = true where id = $1', [registered.account.user_id]);
    browser = await launchChromium();
    page = await (await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(page, gateway.url, input.username, input.password);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await db?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('saves a rule and shows it after a reload', async () => {
    await page.getByRole('link', { name: 'Alerts' }).first().click();
    await page.waitForURL(/\/app\/alerts$/);
    // No bot is configured here: the page says messenger alerts cannot be sent.
    await page.getByText('This service sends no messenger messages.').waitFor();
    const balance = page.locator('[data-rule=balanceBelow]');
    await balance.getByLabel('On').check();
    await balance.getByLabel('Amount, USD').fill('-1');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await balance.getByText('Must be a non-negative USD amount such as "5" or "12.50"').waitFor();

    await balance.getByLabel('Amount, USD').fill('7.25');
    await expect.poll(() => balance.getByLabel('E-mail').isChecked()).toBe(true);
    await page.locator('[data-rule=invoicePaid]').getByLabel('On').check();
    await page.getByRole('button', { name: 'Add a key rule' }).click();
    await page.locator('[data-share="0"]').getByLabel('Share of the cap, %').fill('90');
    await page.getByLabel('Language of alerts').selectOption('ru');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByText('Alerts saved.').waitFor();

    await page.reload();
    await page.locator('[data-rule=balanceBelow]').getByLabel('Amount, USD').waitFor();
    expect(await page.locator('[data-rule=balanceBelow]').getByLabel('Amount, USD').inputValue()).toBe('7.25');
    expect(await page.locator('[data-rule=balanceBelow]').getByLabel('E-mail').isChecked()).toBe(true);
    expect(await page.locator('[data-rule=invoicePaid]').getByLabel('On').isChecked()).toBe(true);
    expect(await page.locator('[data-rule=spendTodayAbove]').getByLabel('On').isChecked()).toBe(false);
    expect(await page.locator('[data-share="0"]').getByLabel('Share of the cap, %').inputValue()).toBe('90');
    expect(await page.getByLabel('Language of alerts').inputValue()).toBe('ru');
    const rules = await db.query<{ kind: string; threshold: string | null; channels: string[] }>('select kind, threshold::text as threshold, channels from alert_rules order by kind');
    expect(rules).toEqual([
      { kind: 'balance_below', threshold: '7.2500000000', channels: ['email'] },
      { kind: 'invoice_paid', threshold: null, channels: ['email'] },
      { kind: 'key_cap_share', threshold: '90.0000000000', channels: ['email'] },
    ]);

    await mkdir(path.join(SCREENSHOTS, 'en'), { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'en', 'alerts.png'), fullPage: true });
    const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`)).toEqual([]);
  });
});
