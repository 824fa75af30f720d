import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { Decimal } from 'decimal.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { SCREENSHOTS, launchChromium, reactStateHolds as pageHolds, requireChromium, signIn, usd } from '../helpers/browser.js';
import { graphql, registerRest } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createKey, fund } from '../helpers/inference.js';
import { spawnGateway, type ServerProcess } from '../helpers/process.js';
import { hexKey } from '../helpers/upstreams.js';
import { AdminMarginDocument, AdminUpstreamUsageDocument } from '../graphql/generated.js';

/**
 * Issue 52's admin pages in a real Chromium against the gateway process: an upstream (the simulator) created
 * through the page with a pool of two secrets, routed and priced there; real /v1 traffic through it; its
 * credentials' badges turning unhealthy live when the simulator fails (no reload); the Test button; the
 * margin page equal to adminMargin; and no secret ever in the page, its state or anything the API sent it.
 */
const UPSTREAM = 'lake-sim';
const MODEL = 'gen-5.6-luna';
/** A planted secret ending in `end` (so each credential's `…last4` differs). */
const planted = (end: string) => `sk-planted-${randomBytes(12).toString('hex')}${end}`;
// Planted secrets: the simulator's pool. None may ever reach the page.
const SECRET_A = planted('Aa11');
const SECRET_B = planted('Bb22');
const SECRET_ENV = planted('Ee33');
const SECRETS = [SECRET_A, SECRET_B, SECRET_ENV];

describe('admin pages: upstreams and margin, in Chromium', () => {
  let db: TestDatabase;
  let dataDir: string;
  let simulator: Simulator;
  let gateway: ServerProcess;
  let browser: Browser;
  let page: Page;
  let admin: { token: string; login: string; password: string };
  let customerKey = '';
  let customerId = '';
  /** The /v1 requests sent (each writes one usage event). */
  let calls = 0;
  /** Every GraphQL body the page received (HTTP responses and socket frames). */
  const received: string[] = [];
  const pending: Promise<unknown>[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    requireChromium();
    simulator = await startSimulator({ apiKey: SECRET_A, apiKeys: [SECRET_B, SECRET_ENV], name: 'lake' });
    db = await createTestDatabase();
    dataDir = await mkdtemp(`${tmpdir()}/baikal-admin-upstreams-`);
    // No operator file and not development: no demo, no upstream until the page makes one.
    gateway = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, NODE_ENV: 'test', LOG_LEVEL: 'info', STATUS_PROBE_SECONDS: '0', BAIKAL_SECRET_KEY: hexKey(), LAKE_POOL_KEY: SECRET_ENV });
    const registered = await registerRest(gateway.url);
    await db.query('update users set is_admin = true where id = $1', [registered.account.user_id]);
    admin = { token: registered.token, login: registered.input.username, password: registered.input.password };
    const customer = await registerRest(gateway.url);
    customerKey = (await createKey({ url: gateway.url }, customer.token)).key;
    customerId = customer.account.user_id as string;
    await fund({ url: gateway.url }, admin, customerId, '50');

    browser = await launchChromium();
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d|Failed to load resource/.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/graphql') pending.push(response.text().then((text) => received.push(text), () => undefined));
    });
    page.on('websocket', (socket) => socket.on('framereceived', (frame) => void received.push(String(frame.payload))));
    await mkdir(SCREENSHOTS, { recursive: true });

    await signIn(page, gateway.url, admin.login, admin.password);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await simulator?.close();
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const open = async (route: string) => {
    await page.goto(`${gateway.url}/app/${route}`);
    await page.locator('main h1').first().waitFor();
    await page.waitForLoadState('networkidle');
  };
  const card = () => page.locator(`[data-upstream="${UPSTREAM}"]`);
  const credentialRow = (label: string) => card().locator(`tr[data-credential="${label}"]`);
  const stateOf = (label: string) => credentialRow(label).getByTestId('credential-state').getAttribute('data-state');
  const chat = (prompt: string) => {
    calls += 1;
    return fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: prompt }], max_tokens: 40 }),
    });
  };
  /** Every string React holds for the page and every input's value, searched for the secrets. */
  const reactStateHolds = (secrets: string[]) => pageHolds(page, secrets);
  const noSecretInHtml = async () => {
    const html = await page.content();
    for (const secret of SECRETS) expect(html).not.toContain(secret);
  };

  it('creates an upstream with a pooled credential (two secrets) through the page: a refused field is marked, the secrets are cleared and shown as …last4', async () => {
    await page.getByRole('link', { name: 'Upstreams' }).click();
    await page.getByRole('heading', { name: 'Upstreams', level: 1 }).waitFor();
    await page.getByText('No upstream yet').waitFor();
    const form = page.getByTestId('create-upstream');
    await form.getByLabel('Upstream ID').fill(UPSTREAM);
    await form.getByLabel('Kind').selectOption('openai-compatible');
    // A base URL with credentials in it is refused by the API, under the field.
    await form.getByLabel('Base URL').fill(`http://user:pw@${new URL(simulator.url).host}/v1`);
    // The breaker's cool-down is set through the API's own health settings, so the open state lasts the test.
    await form.getByLabel('Cool-down, seconds').fill('120');
    await form.locator('[data-credential-row="0"]').getByLabel('Label').fill('primary');
    await form.locator('[data-credential-row="0"]').getByLabel('Secret', { exact: true }).fill(SECRET_A);
    await form.getByRole('button', { name: 'Another credential' }).click();
    await form.locator('[data-credential-row="1"]').getByLabel('Label').fill('second');
    await form.locator('[data-credential-row="1"]').getByLabel('Secret', { exact: true }).fill(SECRET_B);
    // The search below finds what React holds (the typed ID) and what an input holds; a typed secret is only in its input.
    expect(await reactStateHolds([UPSTREAM, SECRET_A])).toEqual([UPSTREAM, `input:${UPSTREAM}`, `input:${SECRET_A}`]);
    await form.getByRole('button', { name: 'Create upstream' }).click();
    const baseUrl = form.getByLabel('Base URL');
    await baseUrl.and(page.locator('[aria-invalid=true]')).waitFor();
    expect(await form.locator('.field-error').first().textContent()).toBeTruthy();
    // Sent: the secrets left the page even though the API refused the form.
    expect(await form.locator('input[type=password]').evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value))).toEqual(['', '']);
    expect(await db.query('select 1 from upstreams')).toHaveLength(0);

    await baseUrl.fill(`${simulator.url}/v1`);
    await form.locator('[data-credential-row="0"]').getByLabel('Secret', { exact: true }).fill(SECRET_A);
    await form.locator('[data-credential-row="1"]').getByLabel('Secret', { exact: true }).fill(SECRET_B);
    await form.getByRole('button', { name: 'Create upstream' }).click();
    await page.getByText(`Upstream ${UPSTREAM} created.`).waitFor();
    await credentialRow('primary').getByText(`…${SECRET_A.slice(-4)}`).waitFor();
    await credentialRow('second').getByText(`…${SECRET_B.slice(-4)}`).waitFor();
    const [stored] = await db.query<{ health: { cooldownSeconds: number } }>('select health from upstreams where id = $1', [UPSTREAM]);
    expect(stored!.health.cooldownSeconds).toBe(120);
    // No route yet: not routed, each credential's badge says so.
    await card().getByText('not routed: no enabled route').waitFor();
    expect(await stateOf('primary')).toBe('none');
    expect(await reactStateHolds(SECRETS)).toEqual([]);
    await noSecretInHtml();
  }, 60_000);

  it('routes a catalog model, prices it, adds and removes an environment credential: the badges turn healthy', async () => {
    await card().getByText('Routes (0)').click();
    const routes = card().getByRole('form', { name: `Routes of ${UPSTREAM}` });
    await routes.getByRole('button', { name: 'Add a route' }).click();
    const route = routes.locator('[data-route="0"]');
    await route.getByLabel('Model', { exact: true }).selectOption(MODEL);
    await route.getByLabel('Route group').selectOption('cheap');
    // A weight the API refuses is marked under its field.
    await route.getByLabel('Weight').fill('0');
    await routes.getByRole('button', { name: 'Save routes' }).click();
    await route.getByLabel('Weight').and(page.locator('[aria-invalid=true]')).waitFor();
    await route.getByLabel('Weight').fill('2');
    await routes.getByRole('button', { name: 'Save routes' }).click();
    await routes.getByText('Routes saved').waitFor();
    await card().getByText('Routes (1)').waitFor();
    await expect.poll(() => stateOf('primary')).toBe('closed');
    await expect.poll(() => stateOf('second')).toBe('closed');
    await card().getByText('routed', { exact: true }).waitFor();

    await card().getByText('Upstream prices (0)').click();
    const prices = card().getByRole('form', { name: `Prices of ${UPSTREAM}` });
    await prices.getByRole('button', { name: 'Add a price' }).click();
    const price = prices.locator('fieldset').first();
    expect(await price.getByLabel('Model', { exact: true }).inputValue()).toBe(MODEL);
    await price.getByLabel('Input, USD per 1M tokens').fill('0.004');
    await price.getByLabel('Output, USD per 1M tokens').fill('0.01');
    await prices.getByRole('button', { name: 'Save prices' }).click();
    await prices.getByText('Prices saved').waitFor();
    const [row] = await db.query<{ input: string; output: string }>('select input_per_1m::text as input, output_per_1m::text as output from upstream_prices where upstream_id = $1 and model = $2', [UPSTREAM, MODEL]);
    expect([new Decimal(row!.input).toString(), new Decimal(row!.output).toString()]).toEqual(['0.004', '0.01']);

    await card().getByText('Add a credential').click();
    const add = card().getByRole('form', { name: `Add a credential to ${UPSTREAM}` });
    await add.getByLabel('Source').selectOption('env');
    await add.getByLabel('Label').fill('from-env');
    await add.getByLabel('Variable name').fill('LAKE_POOL_KEY');
    await add.getByRole('button', { name: 'Add', exact: true }).click();
    await credentialRow('from-env').getByText('variable LAKE_POOL_KEY').waitFor();
    await expect.poll(() => stateOf('from-env')).toBe('closed');
    page.once('dialog', (dialog) => void dialog.accept());
    await credentialRow('from-env').getByRole('button', { name: 'Remove credential from-env' }).click();
    await credentialRow('from-env').waitFor({ state: 'detached' });
    await noSecretInHtml();
  }, 60_000);

  it('real /v1 traffic goes through the pool; when the simulator fails, the badges turn unhealthy live (no reload); Test shows the outcome', async () => {
    for (let i = 0; i < 6; i++) {
      const response = await chat(`margin traffic ${i} [sim:words=6]`);
      expect(response.status, await response.clone().text()).toBe(200);
    }
    expect(simulator.requests.filter((r) => r.path === '/v1/chat/completions' && r.credential >= 0)).toHaveLength(6);
    await expect.poll(async () => (await db.query(`select 1 from usage_events where upstream_id = $1 and status = 'success'`, [UPSTREAM])).length, { timeout: 15_000 }).toBe(6);

    // The page stays as it is from here: a marker on the window proves no reload happened.
    await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
    await simulator.setFault({ mode: 'status', status: 503 });
    try {
      let sent = 0;
      for (; sent < 60; sent++) {
        if ((await stateOf('primary')) === 'open' && (await stateOf('second')) === 'open') break;
        expect((await chat(`failing ${sent}`)).status).toBeGreaterThanOrEqual(500);
      }
      await expect.poll(() => stateOf('primary'), { timeout: 10_000 }).toBe('open');
      await expect.poll(() => stateOf('second'), { timeout: 10_000 }).toBe('open');
      expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
      // The change came over the page's socket (upstreamHealthChanged), not from a reload.
      expect(received.filter((frame) => frame.includes('"upstreamHealthChanged"') && frame.includes('"state":"open"') && frame.includes(UPSTREAM)).length).toBeGreaterThanOrEqual(2);
      await credentialRow('primary').getByText('open: failing').waitFor();
      await credentialRow('primary').getByText(/until /).waitFor();

      await credentialRow('primary').getByRole('button', { name: 'Test credential primary' }).click();
      const result = credentialRow('primary').getByTestId('test-result');
      await result.waitFor();
      expect(await result.getAttribute('data-outcome')).toBe('server_error');
      expect(await result.textContent()).toContain('HTTP 503');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-upstreams-unhealthy.png'), fullPage: true });
    } finally {
      await simulator.setFault(null);
    }
    await credentialRow('second').getByRole('button', { name: 'Test credential second' }).click();
    const good = credentialRow('second').getByTestId('test-result');
    await expect.poll(() => good.getAttribute('data-outcome')).toBe('ok');
    expect(await good.textContent()).toMatch(/HTTP 200 · \d+ ms/);
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    await noSecretInHtml();
  }, 90_000);

  it('the margin page shows what adminMargin answers (totals, the chart by day, the tables) and the upstream’s invoice view', async () => {
    // Usage is written in batches: the page and the API read the same events once every request's is written.
    await expect.poll(async () => (await db.query('select 1 from usage_events where user_id = $1', [customerId])).length, { timeout: 15_000 }).toBe(calls);
    // The page's own question (urql sends a query as GET within the URL's limit, else as POST).
    const isMarginQuery = (request: { url(): string; postData(): string | null }) => new URL(request.url()).pathname === '/graphql' && `${request.url()}${request.postData() ?? ''}`.includes('AdminMarginReport');
    const requested = page.waitForRequest(isMarginQuery);
    await page.getByRole('link', { name: 'Margin', exact: true }).click();
    const request = await requested;
    const sent = request.method() === 'GET' ? new URL(request.url()).searchParams.get('variables')! : JSON.stringify((JSON.parse(request.postData()!) as { variables: unknown }).variables);
    const variables = JSON.parse(sent) as { from: string; to: string };
    await page.getByTestId('total-revenue').waitFor();
    const answer = await graphql(gateway.url, AdminMarginDocument, variables, admin.token);
    expect(answer.errors).toBeUndefined();
    const margin = answer.data!.adminMargin;
    expect(new Decimal(margin.totals.revenueUsd).isPositive()).toBe(true);
    expect(new Decimal(margin.totals.upstreamCostUsd).isPositive()).toBe(true);
    expect(new Decimal(margin.totals.revenueUsd).minus(margin.totals.uncostedRevenueUsd).minus(margin.totals.upstreamCostUsd).equals(margin.totals.marginUsd)).toBe(true);
    expect(await page.getByTestId('total-revenue').textContent()).toBe(usd(margin.totals.revenueUsd));
    expect(await page.getByTestId('total-cost').textContent()).toBe(usd(margin.totals.upstreamCostUsd));
    expect(await page.getByTestId('total-margin').textContent()).toBe(usd(margin.totals.marginUsd));
    expect(await page.getByTestId('total-uncosted').textContent()).toBe(String(margin.totals.uncostedRequests));
    expect(await page.getByTestId('margin-totals').textContent()).toContain(`${margin.totals.requests} requests`);
    const costed = new Decimal(margin.totals.revenueUsd).minus(margin.totals.uncostedRevenueUsd);
    expect(await page.getByTestId('total-percent').textContent()).toBe(`${new Decimal(margin.totals.marginUsd).div(costed).times(100).toDecimalPlaces(1, Decimal.ROUND_HALF_UP).toFixed(1).replace(/\.0$/, '')}% of the costed revenue`);

    // The chart: today's three bars are drawn, and its table says today's exact figures.
    const today = new Date().toISOString().slice(0, 10);
    const day = margin.byDay.find((r) => r.key === today)!;
    const chart = page.getByTestId('margin-chart');
    for (const series of ['0', '1', '2']) expect(Number(await chart.locator(`rect.bar[data-label="${today}"][data-series="${series}"]`).getAttribute('height'))).toBeGreaterThan(0);
    await chart.getByText('Show as a table').click();
    expect(await chart.locator(`tr[data-label="${today}"] td`).allTextContents()).toEqual([usd(day.revenueUsd), usd(day.upstreamCostUsd), usd(day.marginUsd)]);

    for (const [testId, rows] of [['margin-by-model', margin.byModel], ['margin-by-group', margin.byGroup], ['margin-by-upstream', margin.byUpstream]] as const) {
      for (const row of rows) {
        const cells = await page.getByTestId(testId).locator(`tr[data-key="${row.key}"] td`).allTextContents();
        expect(cells.slice(0, 4), `${testId} ${row.key}`).toEqual([String(row.requests), usd(row.revenueUsd), usd(row.upstreamCostUsd), usd(row.marginUsd)]);
      }
    }
    expect(margin.byUpstream.map((r) => r.key)).toContain(UPSTREAM);

    // The invoice view: the upstream's usage of the model, as adminUpstreamUsage answers it.
    await page.getByTestId('upstream-invoice').waitFor();
    const usage = await graphql(gateway.url, AdminUpstreamUsageDocument, { ...variables, upstreamId: UPSTREAM }, admin.token);
    const line = usage.data!.adminUpstreamUsage.find((l) => l.model === MODEL)!;
    expect(line.requests).toBe(6);
    const cells = await page.getByTestId('upstream-invoice').locator(`tr[data-model="${MODEL}"] td`).allTextContents();
    const n = (value: number) => value.toLocaleString('en-US');
    expect(cells).toEqual([n(line.requests), n(line.inputTokens), n(line.cacheReadTokens), n(line.cacheWriteTokens), n(line.outputTokens), n(line.images), usd(line.costUsd), n(line.uncostedRequests)]);

    // A period the API refuses (from after to) is marked under its field.
    await page.getByLabel('Period', { exact: true }).selectOption('custom');
    await page.getByLabel('From (UTC day)').fill('2030-01-10');
    await page.getByLabel('To (UTC day, included)').fill('2030-01-01');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByLabel('From (UTC day)').and(page.locator('[aria-invalid=true]')).waitFor();
  }, 60_000);

  it('disables and enables the upstream: routing leaves it out and takes it back', async () => {
    await open('admin/upstreams');
    await card().getByRole('button', { name: 'Disable', exact: true }).click();
    await card().getByText('not routed: disabled').waitFor();
    await expect.poll(() => stateOf('primary')).toBe('none');
    expect((await db.query<{ enabled: boolean }>('select enabled from upstreams where id = $1', [UPSTREAM]))[0]!.enabled).toBe(false);
    await card().getByRole('button', { name: 'Enable', exact: true }).click();
    await card().getByText('routed', { exact: true }).waitFor();
    await expect.poll(() => stateOf('primary')).not.toBe('none');
  }, 30_000);

  it('both pages pass axe and are photographed in English (light and dark) and Russian; no secret reached the page', async () => {
    const violations: string[] = [];
    for (const language of ['en', 'ru'] as const) {
      await page.evaluate((lang) => localStorage.setItem('baikal.language', lang), language);
      await mkdir(path.join(SCREENSHOTS, language), { recursive: true });
      for (const route of ['admin/upstreams', 'admin/margin']) {
        for (const theme of language === 'en' ? (['light', 'dark'] as const) : (['light'] as const)) {
          await page.evaluate((t) => localStorage.setItem('baikal.theme', t), theme);
          await open(route);
          expect(await page.evaluate(() => document.documentElement.lang)).toBe(language);
          if (route === 'admin/upstreams') {
            await card().waitFor();
            for (const summary of await card().locator('details.section > summary').all()) await summary.click();
          } else {
            await page.getByTestId('margin-chart').waitFor();
            await page.getByTestId('margin-chart').locator('summary').click();
          }
          const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
          for (const violation of result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
            violations.push(`${language}/${theme} ${route}: ${violation.id} (${violation.impact}) ${violation.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
          }
          await page.screenshot({ path: path.join(SCREENSHOTS, language, `${route.replace('/', '-')}${theme === 'dark' ? '.dark' : ''}.png`), fullPage: true });
        }
      }
    }
    await page.evaluate(() => (localStorage.setItem('baikal.theme', 'light'), localStorage.setItem('baikal.language', 'en')));
    expect(violations).toEqual([]);

    // Nothing the page received, holds or shows carries a secret: every GraphQL answer and socket frame, React's state, the HTML, storage.
    await Promise.all(pending);
    expect(received.length).toBeGreaterThan(20);
    expect(received.some((body) => body.includes('"upstreamHealthChanged"'))).toBe(true);
    for (const body of received) for (const secret of SECRETS) expect(body).not.toContain(secret);
    await open('admin/upstreams');
    expect(await reactStateHolds(SECRETS)).toEqual([]);
    await noSecretInHtml();
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
    for (const secret of SECRETS) expect(storage).not.toContain(secret);
    expect(problems).toEqual([]);
  }, 120_000);

  it('deletes the upstream only after the confirm', async () => {
    page.once('dialog', (dialog) => void dialog.dismiss());
    await card().getByRole('button', { name: 'Delete', exact: true }).click();
    expect(await db.query('select 1 from upstreams where id = $1', [UPSTREAM])).toHaveLength(1);
    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain(UPSTREAM);
      void dialog.accept();
    });
    await card().getByRole('button', { name: 'Delete', exact: true }).click();
    await card().waitFor({ state: 'detached' });
    await page.getByText('No upstream yet').waitFor();
    expect(await db.query('select 1 from upstreams')).toHaveLength(0);
    expect(await db.query('select 1 from upstream_credentials')).toHaveLength(0);
  }, 30_000);
});

/** The page's globals, inside `page.evaluate` (the test project has no DOM types). */
declare const document: { documentElement: { lang: string } };
declare const window: unknown;
declare const localStorage: { setItem(key: string, value: string): void } & Record<string, string>;
declare const sessionStorage: Record<string, string>;
