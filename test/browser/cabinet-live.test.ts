import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../helpers/accounts.js';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { http } from '../helpers/clients.js';
import { startTcpForwarder } from '../helpers/tcp-forwarder.js';
import { apiAccount, createKey, processAdmin, requestId, setKeyLimits, startInferenceStack, usageEventOf, type ApiAccount, type InferenceStack } from '../helpers/inference.js';

/**
 * The live cabinet in a real Chromium against the built gateway and the upstream simulator: pages left open move
 * with the account's events (balanceChanged, usageRecorded, keyEvents) without a reload, counts follow each
 * language's plural rules, and the usage filters offer the catalog's values.
 */
describe('the live cabinet in Chromium', () => {
  let stack: InferenceStack;
  let account: ApiAccount;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: { token: string; userId: string };
  const problems: string[] = [];

  beforeAll(async () => {
    requireChromium();
    stack = await startInferenceStack();
    admin = await processAdmin(stack);
    account = await apiAccount(stack, admin, '10');
    browser = await launchChromium();
    context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    // Signed in by the session the API gave at registration (the cookie the sign-in form would set).
    await context.addCookies([{ name: 'baikal_session', value: account.token, url: stack.url }]);
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d|Failed to load resource/.test(message.text())) problems.push(message.text());
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** Opens a page and marks the document: a reload would lose the mark. */
  const open = async (route: string) => {
    await page.goto(`${stack.url}/app/${route}`);
    await page.locator('main h1').first().waitFor();
    await page.waitForLoadState('networkidle');
    await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));
  };
  const notReloaded = () => page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce === true);
  const language = async (to: 'en' | 'ru') => {
    await page.getByLabel(to === 'ru' ? 'Language' : 'Язык').selectOption(to);
    await expect.poll(() => page.evaluate(() => document.documentElement.lang)).toBe(to);
  };
  const chat = async (model = 'gen-5.6-luna', key = account.key) => {
    const id = requestId('live');
    const response = await fetch(`${stack.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello from the live cabinet [sim:words=3]' }] }),
    });
    await response.text();
    return { status: response.status, id };
  };
  /** Today's spend and requests (UTC day) and the balance, from the database. */
  const ledger = async () => {
    const [today] = await stack.db.query<{ spend: string; requests: string }>(
      `select coalesce(sum(amount_usd), 0)::text as spend, count(*)::text as requests from usage_events where user_id = $1 and created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC'`,
      [account.userId],
    );
    const [paid] = await stack.db.query<{ paid: string }>(`select balance_paid_usd::text as paid from users where id = $1`, [account.userId]);
    return { spend: today!.spend, requests: Number(today!.requests), balance: (await ledgerBalance(stack, account.userId)).balance, paid: paid!.paid };
  };
  const text = (testId: string) => page.getByTestId(testId).textContent();

  it('the dashboard moves its balance and today’s spend with each request made with a key, without a reload, in the page’s plural forms', async () => {
    await open('dashboard');
    await page.getByTestId('available').waitFor(); // the balance subscription's first event: the socket is up
    expect(await text('today-requests')).toBe('0 requests');
    const before = await text('balance');
    const expectTo = async (requests: number, en: string, ru: string) => {
      const want = await ledger();
      expect(want.requests).toBe(requests);
      await expect.poll(() => text('today-requests'), { timeout: 10_000 }).toBe(en);
      expect(await text('today-spend')).toBe(formatExpected(want.spend));
      await expect.poll(() => text('balance')).toBe(formatExpected(want.balance));
      expect(await text('paid')).toBe(formatExpected(want.paid));
      await language('ru');
      expect(await text('today-requests')).toBe(ru);
      await language('en');
    };

    const first = await chat();
    expect(first.status).toBe(200);
    await usageEventOf(stack, first.id, 10_000);
    await expectTo(1, '1 request', '1 запрос');
    expect(await text('balance')).not.toBe(before);
    expect(await ledger()).toMatchObject({ balance: (await ledgerBalance(stack, account.userId)).ledger });

    await usageEventOf(stack, (await chat()).id, 10_000);
    await expectTo(2, '2 requests', '2 запроса');
    for (const { id } of await Promise.all([chat(), chat(), chat()])) await usageEventOf(stack, id, 10_000);
    await expectTo(5, '5 requests', '5 запросов');
    expect(await notReloaded()).toBe(true);
  }, 90_000);

  it('the keys page shows a key created and revoked through the REST API, and a key whose monthly cap was reached', async () => {
    await open('keys');
    const created = await createKey(stack, account.token, { label: 'made-by-the-api' });
    const row = page.locator(`tr[data-key-id="${created.id}"]`);
    await row.getByRole('cell', { name: 'made-by-the-api', exact: true }).waitFor({ timeout: 10_000 });
    const revoked = await http(stack.url, 'DELETE', `/keys/${created.id}`, { token: account.token });
    expect(revoked.status).toBeLessThan(300);
    await row.waitFor({ state: 'detached', timeout: 10_000 });

    await setKeyLimits(stack, admin, account.keyId, { monthlySpendCap: '0.000001' });
    expect((await chat()).status).toBe(402);
    const badge = page.locator(`tr[data-key-id="${account.keyId}"] .badge`);
    await expect.poll(() => badge.textContent(), { timeout: 10_000 }).toMatch(/^Monthly cap reached · /);
    await language('ru');
    await expect.poll(() => badge.textContent()).toMatch(/^Месячный лимит исчерпан · /);
    await language('en');

    // A limit refusing requests (a fresh key's: the minute's window is its own): the badge names it and what it refused.
    await setKeyLimits(stack, admin, account.keyId, { monthlySpendCap: null });
    const limited = await createKey(stack, account.token, { label: 'rate-limited' });
    await setKeyLimits(stack, admin, limited.id, { rpmLimit: 2 });
    const statuses = await Promise.all(Array.from({ length: 5 }, () => chat('gen-5.6-luna', limited.key)));
    expect(statuses.filter((s) => s.status === 429)).toHaveLength(3);
    const limitedBadge = page.locator(`tr[data-key-id="${limited.id}"] .badge`);
    await limitedBadge.filter({ hasText: 'Refused by the requests-per-minute limit: 3 requests · ' }).waitFor({ timeout: 10_000 });
    await language('ru');
    await limitedBadge.filter({ hasText: 'Отказано (лимит запросов в минуту): 3 запроса · ' }).waitFor();
    await language('en');
    expect(await notReloaded()).toBe(true);
  }, 60_000);

  it('the usage filters are selects of the catalog’s models, groups and families; filtering by one works; new requests arrive on top', async () => {
    const catalog = await http(stack.url, 'POST', '/graphql', { token: account.token, body: { query: '{ catalogModels { id family groups { id } } }' } });
    const models = (catalog.body as { data: { catalogModels: { id: string; family: string; groups: { id: string }[] }[] } }).data.catalogModels;
    await open('usage');
    const optionsOf = (label: string) => page.getByLabel(label, { exact: true }).locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(await page.getByLabel('Model', { exact: true }).evaluate((e) => (e as unknown as { tagName: string }).tagName)).toBe('SELECT');
    expect((await optionsOf('Model')).sort()).toEqual(['', ...models.map((m) => m.id)].sort());
    expect((await optionsOf('Route group')).sort()).toEqual(['', ...new Set(models.flatMap((m) => m.groups.map((g) => g.id)))].sort());
    expect((await optionsOf('Provider family')).sort()).toEqual(['', ...new Set(models.map((m) => m.family))].sort());
    expect(await page.getByLabel('Model', { exact: true }).locator('option').first().textContent()).toBe('All');

    const rows = page.locator('[data-testid=usage-table] tbody tr');
    const stored = async () => Number((await stack.db.query<{ n: string }>('select count(*)::text as n from usage_events where user_id = $1', [account.userId]))[0]!.n);
    const before = await stored(); // the dashboard's, and those the keys' limits refused or let through
    await expect.poll(() => rows.count()).toBe(before);
    // A request made now appears on top, live, and the totals move.
    const live = await chat();
    expect(live.status).toBe(200);
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(before + 1);
    await page.getByTestId('usage-totals').getByText(`${before + 1} requests`, { exact: false }).waitFor();
    await rows.first().getByRole('button').click();
    await page.getByRole('dialog').getByText(live.id).waitFor();
    await page.keyboard.press('Escape');
    expect(await notReloaded()).toBe(true);

    // Filtering by a model the account never used shows nothing; by the one it used, every row.
    const other = models.find((m) => m.id !== 'gen-5.6-luna')!.id;
    await page.getByLabel('Model', { exact: true }).selectOption(other);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No requests in this range.').waitFor();
    await page.getByLabel('Model', { exact: true }).selectOption('gen-5.6-luna');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => rows.count()).toBe(await stored());
    expect(problems).toEqual([]);
  }, 60_000);

  it('after the socket drops, it reconnects and the dashboard reads its snapshot again (what was billed meanwhile shows)', async () => {
    // The page reaches the gateway through a forwarder the test can cut (the session cookie is per host, not port).
    const link = await startTcpForwarder({ port: Number(new URL(stack.url).port) });
    const tab = await context.newPage();
    try {
      await tab.goto(`${link.urlFor(stack.url)}app/dashboard`);
      await tab.getByTestId('available').waitFor();
      const shown = Number(/\d+/.exec((await tab.getByTestId('today-requests').textContent())!)![0]);
      link.cut('reset');
      // Billed while the socket is down: its event reaches no one.
      const missed = await chat();
      await usageEventOf(stack, missed.id, 10_000);
      expect((await ledger()).requests).toBe(shown + 1);
      link.restore();
      await expect.poll(() => tab.getByTestId('today-requests').textContent(), { timeout: 30_000 }).toBe(`${shown + 1} requests`);
      expect(await tab.getByTestId('today-spend').textContent()).toBe(formatExpected((await ledger()).spend));
    } finally {
      await tab.close();
      await link.close();
    }
  }, 60_000);
});

/** The page's globals, inside `page.evaluate` (the test project has no DOM types). */
declare const document: { documentElement: { lang: string } };

/** The cabinet's rendering of a decimal USD amount (ui.tsx formatUsd). */
function formatExpected(value: string): string {
  const [whole, fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `$${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${trimmed}`;
}
