import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { http } from '../helpers/clients.js';
import { MODELS, useOrgBillingGateway, type Person } from '../helpers/org-billing.js';

/**
 * An organization's Payments page in a real Chromium (issue 56): a billing member funds the organization with an
 * invoice made in the page, the checkout provider confirms it (its signed webhook), and the page and the dashboard
 * show the wallet up by the amount and its bonus without a reload; a plain member is told who funds the
 * organization and gets no form. Then the organization's usage CSV is the server's, with the page's member filter.
 */
describe('an organization funded from the cabinet (Chromium)', () => {
  const { state, person, organization, orgKey, chat, pay } = useOrgBillingGateway();
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    requireChromium();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A browser signed in as `who`, switched to the organization in the header; its page errors fail the test. */
  const inOrganization = async (who: Person, organizationId: string): Promise<Page> => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    contexts.push(context);
    await context.addCookies([{ name: 'baikal_session', value: who.token, url: state.gw.url }]);
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d|Failed to load resource/.test(message.text())) problems.push(message.text());
    });
    await page.goto(`${state.gw.url}/app/dashboard`);
    await page.getByLabel('Account or organization').selectOption(organizationId);
    return page;
  };
  /** A ledger owner's stored balances, as numbers of the exact decimals. */
  const wallet = async (id: string) => {
    const [row] = await state.gw.db.query<{ paid: string; bonus: string }>('select balance_paid_usd::text as paid, balance_bonus_usd::text as bonus from users where id = $1', [id]);
    return { paid: Number(row!.paid), bonus: Number(row!.bonus) };
  };

  it('a billing member creates an invoice for the organization, the checkout pays it, and the balance rises by the amount plus bonus, live', async () => {
    const owner = await person();
    const billing = await person();
    const member = await person();
    const orgId = await organization('Lake Treasury', owner, [[billing, 'billing'], [member, 'member']]);

    const page = await inOrganization(billing, orgId);
    await page.getByTestId('balance').waitFor(); // the organization's dashboard
    await page.getByRole('link', { name: 'Payments' }).click();
    await page.getByText('Invoices here fund the organization Lake Treasury').waitFor();
    // The page says nothing of the personal account (it is the organization's page now).
    expect(await page.getByText('shows your personal account').count()).toBe(0);
    expect(await page.getByTestId('balance').textContent()).toBe('$0.00');

    // The same form as the personal page: amount, method, the bonus tier it earns.
    await page.getByLabel('Amount, USD').fill('100');
    await page.getByLabel('Method').selectOption('rub_card');
    await page.getByText('This amount earns a 0.05 bonus (from $100).').waitFor();
    await page.getByRole('button', { name: 'Create invoice' }).click();
    const row = page.locator('[data-testid=invoices] tbody tr').first();
    await row.getByText('pending').waitFor();

    // The invoice is the organization's (its ledger owner), and the page links to its checkout.
    const listed = await http(state.gw.url, 'GET', `/orgs/${orgId}/invoices`, { token: billing.token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.items).toHaveLength(1);
    const invoice = listed.body.items[0] as { id: string; amount_requested: string; currency: string; usd_credit: string; bonus_usd: string; payment_url: string };
    expect({ currency: invoice.currency, credit: Number(invoice.usd_credit), bonus: Number(invoice.bonus_usd) }).toEqual({ currency: 'RUB', credit: 100, bonus: 5 });
    expect(await row.getAttribute('data-invoice')).toBe(invoice.id);
    expect(await row.getByRole('link', { name: 'Pay' }).getAttribute('href')).toBe(invoice.payment_url);
    expect(invoice.payment_url).toMatch(/^https:\/\/pay\.example\.test\/checkout\?invoice=/);
    expect(await state.gw.db.query('select 1 from invoices where user_id = $1', [billing.userId])).toHaveLength(0);

    // The checkout provider confirms it (signed webhook); the open page follows without a reload.
    await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));
    await pay(invoice);
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe('$105.00');
    expect(await page.getByTestId('paid').textContent()).toBe('$100.00');
    expect(await page.getByTestId('bonus').textContent()).toBe('$5.00');
    await row.getByText('paid', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce === true)).toBe(true);
    expect(await wallet(orgId)).toEqual({ paid: 100, bonus: 5 });
    expect(await wallet(billing.userId)).toEqual({ paid: 0, bonus: 0 });

    // The organization's dashboard shows the same wallet.
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe('$105.00');

    // A plain member: the explanation, no form, no invoices.
    const plain = await inOrganization(member, orgId);
    await plain.getByRole('link', { name: 'Payments' }).click();
    await plain.getByText('Only the owner and billing members fund Lake Treasury').waitFor();
    expect(await plain.getByLabel('Amount, USD').count()).toBe(0);
    expect(await plain.getByRole('button', { name: 'Create invoice' }).count()).toBe(0);
    expect(await plain.locator('[data-testid=invoices]').count()).toBe(0);
    expect(problems).toEqual([]);
  }, 120_000);

  it("the organization's usage CSV comes from /orgs/{id}/usage.csv with the page's member filter", async () => {
    const owner = await person();
    const member = await person();
    const other = await person();
    const orgId = await organization('Lake Ledger', owner, [[member, 'member'], [other, 'member']]);
    await state.gw.services.billing.post({ userId: orgId, amountUsd: '5', kind: 'adjustment', bucket: 'paid', idempotencyKey: `org-csv:${orgId}` });
    await chat((await orgKey(orgId, member, 'member-key')).key, MODELS[0], 4);
    await chat((await orgKey(orgId, other, 'other-key')).key, MODELS[0], 4);
    await expect.poll(async () => (await state.gw.db.query('select 1 from usage_events where user_id = $1', [orgId])).length, { timeout: 15_000 }).toBe(2);

    const page = await inOrganization(owner, orgId);
    await page.getByRole('link', { name: 'Usage' }).click();
    await expect.poll(() => page.locator('[data-testid=usage-table] tbody tr').count(), { timeout: 15_000 }).toBe(2);
    await page.getByLabel('Member').selectOption({ label: member.input.username });
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('[data-testid=usage-table] tbody tr').count()).toBe(1);

    const asked = page.waitForRequest((request) => request.url().includes('/usage.csv'));
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const url = new URL((await asked).url());
    expect(url.pathname).toBe(`/orgs/${orgId}/usage.csv`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ member_id: member.userId });
    const lines = (await readFile((await (await download).path())!, 'utf8')).trim().split('\r\n');
    expect(lines[0]).toMatch(/^created_at,request_id,member,member_id,api_key,/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,${member.input.username},${member.userId},member-key,`);
    expect(problems).toEqual([]);
  }, 120_000);
});
