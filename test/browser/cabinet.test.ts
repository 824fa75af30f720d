import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, launchChromium, requireChromium, signIn } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runNode, spawnGateway, type ServerProcess } from '../helpers/process.js';

/**
 * The cabinet in a real Chromium (Debian's package; `.ci/run` installs it) against the real gateway in demo
 * mode: the customer's and the admin's journeys, axe on every page, and screenshots of every page in both
 * languages (written to SCREENSHOTS, which the README names). Its speed with 100,000 usage events is measured
 * in cabinet-speed.test.ts, alone in the timing lane.
 */

const CUSTOMER_PAGES = ['dashboard', 'keys', 'models', 'usage', 'payments', 'videos', 'webhooks', 'playground', 'status', 'news', 'alerts', 'leaderboard', 'profile'];
const ADMIN_PAGES = ['admin/accounts', 'admin/catalog', 'admin/announcements', 'admin/invoices', 'admin/probes'];
/** The customer's pages in the context of their organization (issue 56): its own pages and the organization views. */
const ORGANIZATION_PAGES = ['org/members', 'org/invitations', 'org/statements', 'org/new', 'dashboard', 'keys', 'usage', 'payments'];

describe('the web cabinet in Chromium', () => {
  let db: TestDatabase;
  let dataDir: string;
  let gateway: ServerProcess;
  let browser: Browser;
  let customer: BrowserContext;
  let admin: BrowserContext;
  let me: Page;
  let boss: Page;
  const username = `lake${Date.now().toString(36)}`;
  const email = `${username}@example.test`;
  const password = 'correct horse battery';
  let rawKey = '';
  let organizationId = '';
  let invitePath = '';
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    requireChromium();
    db = await createTestDatabase();
    dataDir = await mkdtemp(`${tmpdir()}/baikal-cabinet-`);
    gateway = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'info', STATUS_PROBE_SECONDS: '5' });
    const created = await runNode(['dist/src/cli/admin.js', 'create', '--email', 'boss@example.test', '--password', password, '--username', 'boss'], { DATABASE_URL: db.url, DATA_DIR: dataDir });
    expect(created.code, created.stderr).toBe(0);
    browser = await launchChromium();
    customer = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    admin = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    me = await customer.newPage();
    boss = await admin.newPage();
    for (const page of [me, boss]) {
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      page.on('pageerror', (error) => consoleErrors.push(String(error)));
    }
    await mkdir(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await db?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const open = async (page: Page, route: string) => {
    await page.goto(`${gateway.url}/app/${route}`);
    await page.locator('main h1').first().waitFor();
    await page.waitForLoadState('networkidle');
  };

  it('serves the cabinet at / with its own CSP, and never shadows the API', async () => {
    const root = await fetch(`${gateway.url}/`, { headers: { accept: 'text/html' } });
    expect(root.status).toBe(200);
    expect(root.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await root.text()).toContain('<div id="root">');
    const deep = await fetch(`${gateway.url}/app/keys`, { headers: { accept: 'text/html' } });
    expect(deep.status).toBe(200);
    // API paths answer as the API, even to a browser asking for HTML.
    for (const apiPath of ['/keys', '/usage', '/v1/models/nope', '/auth/me', '/payments/config', '/nothing-here']) {
      const response = await fetch(`${gateway.url}${apiPath}`, { headers: { accept: 'text/html' } });
      expect(response.headers.get('content-type'), apiPath).toMatch(/json/);
      expect(response.headers.get('content-security-policy'), apiPath).toContain("default-src 'none'");
    }
    const v1 = await fetch(`${gateway.url}/v1/models`);
    expect(v1.status).toBe(200);
    // No landing page that loads an explorer from a CDN.
    const explorer = await fetch(`${gateway.url}/graphql`, { headers: { accept: 'text/html' } });
    const explorerPage = await explorer.text();
    expect(explorerPage).toContain('id="graphiql"');
    expect(explorerPage).not.toMatch(/cdn|apollographql\.com|unpkg|jsdelivr/i);
  });

  it('customer: signs up, verifies the e-mail from the outbox, accepts the agreement, pays an invoice the admin confirms (live), creates a key', async () => {
    await me.goto(`${gateway.url}/`);
    await me.waitForURL(/\/app\/sign-in$/);
    await me.getByRole('link', { name: 'Sign up' }).first().click();
    await me.getByLabel('Username').fill(username);
    await me.getByLabel('E-mail').fill(email);
    await me.getByLabel('Password').fill(password);
    await me.getByRole('button', { name: 'Create account' }).click();
    await me.waitForURL(/\/app\/profile$/);
    await expect.poll(async () => (await db.query(`select 1 from email_outbox where to_address = $1`, [email])).length).toBe(1);
    const [mail] = await db.query<{ text_body: string }>(`select text_body from email_outbox where to_address = $1`, [email]);
    const code = /\b(\d{6})\b/.exec(mail!.text_body)![1]!;
    await me.getByLabel('Code').fill(code);
    await me.getByRole('button', { name: 'Verify', exact: true }).click();
    await me.getByText('(verified)').waitFor();

    await open(me, 'payments');
    await me.getByRole('button', { name: 'I accept' }).click();
    await me.getByLabel('Amount, USD').fill('20');
    await me.getByRole('button', { name: 'Create invoice' }).click();
    await me.locator('[data-testid=invoices] tbody tr').first().getByText('pending').waitFor();

    // The operator confirms the manual payment; the customer's open page shows it paid, live.
    await signIn(boss, gateway.url, 'boss', password);
    await open(boss, 'admin/invoices');
    boss.once('dialog', (dialog) => void dialog.accept('bank-ref-42'));
    await boss.locator('[data-testid=admin-invoices] tbody tr', { hasText: username }).getByRole('button', { name: 'Mark paid' }).click();
    await me.locator('[data-testid=invoices] tbody tr').first().getByText('paid', { exact: true }).waitFor({ timeout: 15_000 });

    await open(me, 'keys');
    await me.getByLabel('Name').fill('laptop');
    await me.getByRole('button', { name: 'Create key' }).click();
    rawKey = (await me.getByTestId('raw-key').textContent())!.trim();
    expect(rawKey).toMatch(/^baikal-sk-/);
    await expect.poll(() => me.locator('pre code').first().textContent()).toContain(rawKey);
    await me.getByRole('button', { name: 'I have saved it' }).click();
    await me.getByRole('cell', { name: 'laptop', exact: true }).waitFor();
  }, 90_000);

  it('customer: a call with the key shows in usage and on the dashboard chart', async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rawKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gen-5.6-sol', messages: [{ role: 'user', content: 'hello from the cabinet test' }] }),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    // Usage is written in batches: wait until the event is there.
    await expect.poll(async () => (await db.query(`select 1 from usage_events where request_id = $1`, [requestId])).length, { timeout: 15_000 }).toBe(1);
    await open(me, 'usage');
    await me.locator('[data-testid=usage-table] tbody tr').first().getByText('gen-5.6-sol').waitFor();
    await me.locator('[data-testid=usage-table] tbody tr').first().getByRole('button').click();
    await me.getByRole('dialog').getByText(requestId!).waitFor();
    await me.keyboard.press('Escape');

    await open(me, 'dashboard');
    const bars = me.locator('figure.chart').first().locator('rect.bar');
    await expect.poll(async () => (await bars.evaluateAll((rects) => rects.filter((r) => Number(r.getAttribute('height')) > 0).length))).toBeGreaterThan(0);
  }, 60_000);

  it('customer: the playground streams an answer with the key held in memory', async () => {
    // In-app navigation: a reload would forget the keys held in memory.
    await me.getByRole('link', { name: 'Playground' }).click();
    // The pages since the key was made were loaded afresh, so the tab no longer holds it: paste it.
    await me.getByLabel('Or paste a key').fill(rawKey);
    await me.getByLabel('Message').fill('stream to the page');
    await me.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => me.getByTestId('answer').textContent(), { timeout: 15_000 }).toContain('baikal is the deepest lake');
    await me.getByText(/Done: \d+ input/).waitFor();
  }, 60_000);

  it('customer: submits a video and watches it complete live, then plays it through the Range endpoint', async () => {
    await open(me, 'keys');
    await me.getByLabel('Name').fill('films');
    await me.getByLabel('Provider family').selectOption('family_d');
    await me.getByRole('button', { name: 'Create key' }).click();
    await me.getByTestId('raw-key').waitFor();
    await me.getByRole('button', { name: 'I have saved it' }).click();

    await me.getByRole('link', { name: 'Video', exact: true }).click();
    await me.getByLabel('API key').selectOption({ label: 'films (family_d)' });
    // The form checks the model's own rules before anything is reserved.
    await me.getByLabel('Prompt').fill('a calm lake at dawn');
    await me.getByLabel('Duration, seconds').fill('99');
    await me.getByRole('button', { name: 'Generate' }).click();
    await me.locator('.field-error', { hasText: /From \d+ to \d+ seconds/ }).first().waitFor();
    expect(await db.query(`select 1 from video_tasks`)).toHaveLength(0);
    await me.getByLabel('Duration, seconds').fill('5');
    await me.getByRole('button', { name: 'Generate' }).click();
    const task = me.locator('ul.tasks li').first();
    await task.waitFor();
    // No reload from here on: the subscription moves it to completed.
    await expect.poll(() => task.getAttribute('data-status'), { timeout: 45_000 }).toBe('completed');
    const src = await task.locator('video').getAttribute('src');
    expect(src).toMatch(/^\/videos\/.+\/content$/);
    const ranged = await me.evaluate(async (url) => {
      const response = await fetch(url, { headers: { range: 'bytes=0-99' } });
      return { status: response.status, length: (await response.arrayBuffer()).byteLength, range: response.headers.get('content-range') };
    }, src!);
    expect(ranged).toMatchObject({ status: 206, length: 100 });
    expect(ranged.range).toMatch(/^bytes 0-99\/\d+$/);
    await expect.poll(() => task.locator('video').evaluate((video) => (video as unknown as { readyState: number }).readyState), { timeout: 15_000 }).toBeGreaterThan(0);
  }, 90_000);

  it('admin: changes a price and sees it on the public price list', async () => {
    await open(boss, 'admin/catalog');
    await boss.getByLabel('Model', { exact: true }).selectOption('gen-5.6-sol');
    const groupValue = await boss.getByLabel('Route group').inputValue();
    await boss.getByLabel('Input, USD per 1M tokens').fill('0.777');
    await boss.getByRole('button', { name: 'Save' }).first().click();
    await boss.getByText(/Prices of .* saved/).waitFor();
    await boss.getByRole('link', { name: 'See the public price list' }).click();
    await boss.locator(`tr[data-model="gen-5.6-sol"] li[data-group="${groupValue}"]`).getByText('$0.777').waitFor();
    // Customers see it too.
    await open(me, 'models');
    await me.locator(`tr[data-model="gen-5.6-sol"] li[data-group="${groupValue}"]`).getByText('$0.777').waitFor();

    // A pricing plan: a bad multiplier is refused under its field (the API's check), then the plan is saved and listed.
    await open(boss, 'admin/catalog');
    await boss.getByLabel('Plan ID').fill('partners');
    await boss.getByLabel('Plan name').fill('Partners');
    await boss.getByLabel('Multiplier').fill('cheap');
    await boss.getByLabel('Shown to customers').selectOption('private');
    const savePlan = boss.locator('[data-testid=pricing-plans] ~ form').getByRole('button', { name: 'Save' });
    await savePlan.click();
    await boss.getByLabel('Multiplier').and(boss.locator('[aria-invalid=true]')).waitFor();
    await boss.getByLabel('Multiplier').fill('0.8');
    await savePlan.click();
    await boss.locator('[data-testid=pricing-plans] tr[data-plan="partners"]').getByText('×0.8').waitFor();
    const [catalog] = await db.query<{ data: { plans: { id: string; multiplier: string; public: boolean }[] } }>('select data from catalog where id = 1');
    expect(catalog!.data.plans.find((plan) => plan.id === 'partners')).toMatchObject({ multiplier: '0.8', public: false });
  }, 60_000);

  it('admin: adjusts the customer balance (seen on the dashboard), publishes an announcement in both languages', async () => {
    await open(me, 'dashboard');
    const before = await me.getByTestId('balance').textContent();
    await open(boss, 'admin/accounts');
    await boss.getByLabel('Username, e-mail or ID').fill(username);
    await boss.getByRole('button', { name: 'Search' }).click();
    await boss.getByRole('button', { name: username }).click();
    await boss.getByLabel('Amount, USD (negative to debit)').fill('5.25');
    await boss.getByLabel('Reason').fill('goodwill credit');
    await boss.getByRole('button', { name: 'Adjust', exact: true }).click();
    await boss.getByText('Posted 5.25 USD.').waitFor();
    const [user] = await db.query<{ total: string }>(`select (balance_paid_usd + balance_bonus_usd)::text as total from users where username = $1`, [username]);
    await open(me, 'dashboard');
    const after = await me.getByTestId('balance').textContent();
    expect(after).not.toBe(before);
    expect(after).toBe(formatExpected(user!.total));
    const [ledger] = await db.query<{ sum: string; balance: string }>(
      `select coalesce(sum(t.amount_usd), 0)::text as sum, (u.balance_paid_usd + u.balance_bonus_usd)::text as balance from users u left join transactions t on t.user_id = u.id where u.username = $1 group by u.id`,
      [username],
    );
    expect(Number(ledger!.sum)).toBe(Number(ledger!.balance));

    await open(boss, 'admin/announcements');
    await boss.getByLabel('Title (English)').fill('Lake season is open');
    await boss.getByLabel('Text (English)').fill('New models are on the list.');
    await boss.getByLabel('Title (Russian)').fill('Сезон на озере открыт');
    await boss.getByLabel('Text (Russian)').fill('В списке новые модели.');
    await boss.getByRole('button', { name: 'Publish' }).first().click();
    await boss.getByText('published', { exact: true }).first().waitFor();
    await open(me, 'news');
    await me.getByRole('heading', { name: /Lake season is open/ }).waitFor();
    await me.getByLabel('Language').selectOption('ru');
    await me.getByRole('heading', { name: /Сезон на озере открыт/ }).waitFor();
    await me.getByLabel('Язык').selectOption('en');
  }, 90_000);

  it('the GraphQL explorer at /graphql is GraphiQL from our origin only, signed in by the cabinet session', async () => {
    const page = await customer.newPage();
    const foreign: string[] = [];
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    // Offline: anything not from the gateway is refused (and would fail the test).
    await page.route((url) => url.origin !== new URL(gateway.url).origin, (route) => (foreign.push(route.request().url()), route.abort()));
    const response = await page.goto(`${gateway.url}/graphql`);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    // The editor is ready once it shows the first query (an earlier click finds no editor to read).
    await expect.poll(() => page.locator('.graphiql-query-editor').innerText(), { timeout: 15_000 }).toContain('query Me');
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => page.locator('.result-window').innerText(), { timeout: 15_000 }).toContain(username);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'graphql-explorer.png') });
    await page.close();
  }, 60_000);

  it('field errors from the API are shown in the language of the page', async () => {
    const context = await browser.newContext({ locale: 'ru-RU' });
    const page = await context.newPage();
    await page.goto(`${gateway.url}/app/sign-up`);
    await page.getByLabel('Имя пользователя').fill('ab');
    await page.getByLabel('E-mail').fill('short-name@example.test');
    await page.getByLabel('Пароль').fill(password);
    await page.getByRole('button', { name: 'Создать аккаунт' }).click();
    await page.locator('.field-error', { hasText: 'Не меньше 3 символов.' }).waitFor();
    await page.getByLabel('Имя пользователя').fill('-bad name');
    await page.getByRole('button', { name: 'Создать аккаунт' }).click();
    await page.locator('.field-error', { hasText: 'Буквы, цифры' }).waitFor();
    expect(await db.query(`select 1 from users where email = 'short-name@example.test'`)).toHaveLength(0);
    await context.close();
  }, 60_000);

  it('customer: founds an organization and invites someone by e-mail (the organization pages of the round below)', async () => {
    await open(me, 'org/new');
    await me.getByLabel('Name').fill('Lake Works');
    await me.getByRole('button', { name: 'Create organization' }).click();
    await me.waitForURL(/\/app\/org\/members$/);
    organizationId = await me.getByLabel('Account or organization').inputValue();
    expect(organizationId).not.toBe('');
    await me.getByLabel('E-mail').fill('newcomer@example.test');
    await me.getByRole('button', { name: 'Send invitation' }).click();
    await me.getByText('Invitation sent to newcomer@example.test.').waitFor();
    await expect.poll(async () => (await db.query(`select 1 from email_outbox where to_address = 'newcomer@example.test'`)).length).toBe(1);
    const [mail] = await db.query<{ text_body: string }>(`select text_body from email_outbox where to_address = 'newcomer@example.test'`);
    invitePath = /\/app\/invite\?token=\S+/.exec(mail!.text_body)![0];
    // Back to the personal account for the tests after this one.
    await me.getByLabel('Account or organization').selectOption({ label: 'Personal' });
    await open(me, 'dashboard');
    await me.getByTestId('available').waitFor();
  }, 60_000);

  it('every page passes axe (no serious or critical violations) in both themes, and is written as a screenshot in both languages', async () => {
    // [page, route, screenshot name, in the organization's context]
    const pages: [Page, string, string, boolean][] = [
      ...CUSTOMER_PAGES.map((p): [Page, string, string, boolean] => [me, p, p, false]),
      ...ADMIN_PAGES.map((p): [Page, string, string, boolean] => [boss, p, p, false]),
      ...ORGANIZATION_PAGES.map((p): [Page, string, string, boolean] => [me, p, `organization-${p}`, true]),
      [me, invitePath.slice('/app/'.length), 'invite', false],
    ];
    const problems: string[] = [];
    for (const language of ['en', 'ru'] as const) {
      for (const page of [me, boss]) await page.evaluate((lang) => localStorage.setItem('baikal.language', lang), language);
      await mkdir(path.join(SCREENSHOTS, language), { recursive: true });
      for (const [page, route, name, inOrganization] of pages) {
        for (const theme of language === 'en' ? (['light', 'dark'] as const) : (['light'] as const)) {
          await page.evaluate((t) => localStorage.setItem('baikal.theme', t), theme);
          await page.evaluate((id) => (id ? localStorage.setItem('baikal.context', id) : localStorage.removeItem('baikal.context')), inOrganization ? organizationId : '');
          await open(page, route);
          expect(await page.evaluate(() => document.documentElement.lang)).toBe(language);
          const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
          for (const violation of result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
            problems.push(`${language}/${theme} ${route}: ${violation.id} (${violation.impact}) ${violation.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
          }
          await page.screenshot({ path: path.join(SCREENSHOTS, language, `${name.replaceAll('/', '-')}${theme === 'dark' ? '.dark' : ''}.png`), fullPage: true });
        }
      }
    }
    for (const page of [me, boss]) await page.evaluate(() => (localStorage.setItem('baikal.theme', 'light'), localStorage.setItem('baikal.language', 'en'), localStorage.removeItem('baikal.context')));
    expect(problems).toEqual([]);
  }, 300_000);

  it('keys and balance work on a phone, by keyboard alone', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, storageState: await customer.storageState() });
    const page = await phone.newPage();
    await page.goto(`${gateway.url}/app/dashboard`);
    await page.getByTestId('balance').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('cell', { name: 'laptop', exact: true }).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'phone-keys.png'), fullPage: true });
    await phone.close();

    // Keyboard: the skip link is first, then the page can be walked to the key form and a key created.
    await open(me, 'keys');
    await me.keyboard.press('Tab');
    expect(await me.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await me.getByLabel('Name').focus();
    await me.keyboard.type('by keyboard');
    await me.keyboard.press('Enter');
    await me.getByTestId('raw-key').waitFor();
    expect(consoleErrors.filter((e) => !/status of 4\d\d|Failed to load resource/.test(e))).toEqual([]);
  }, 60_000);
});

/** The page's globals, inside `page.evaluate` (the test project has no DOM types). */
declare const document: { documentElement: { lang: string; scrollWidth: number }; activeElement: { textContent: string | null } | null };
declare const window: { innerWidth: number };

/** The cabinet's rendering of a decimal USD amount (ui.tsx formatUsd), for the expected balance. */
function formatExpected(value: string): string {
  const [whole, fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `$${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${trimmed}`;
}
