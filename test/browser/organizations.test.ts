import { createServer, type AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, requireChromium, usd } from '../helpers/browser.js';
import { http, registerRest } from '../helpers/clients.js';
import { smtpServer, type Delivered } from '../helpers/identity.js';
import { fund, processAdmin, requestId, startInferenceStack, usageEventOf, type InferenceStack } from '../helpers/inference.js';

/**
 * Issue 56's journey in a real Chromium against the built gateway (mail to a test SMTP server, invitation links on
 * PUBLIC_URL, the upstream simulator): an owner founds and funds an organization and invites by e-mail; the member
 * opens the mailed link in the browser, signs up, accepts, switches to the organization and makes a key; a request
 * with it shows, live, under the member's name on the owner's members page; an admin removes the member and the key
 * stops.
 */

/** A free TCP port: the gateway needs its own address before it starts (PUBLIC_URL names it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A message's text as written: quoted-printable soft breaks and escapes undone (long links are wrapped). */
function decodeMail(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

describe('organizations in the cabinet (Chromium)', () => {
  const delivered: Delivered[] = [];
  const smtp = smtpServer(delivered);
  let stack: InferenceStack;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  const password = 'correct horse battery';
  const tag = Date.now().toString(36);
  const memberName = `diver${tag}`;
  const memberEmail = `${memberName}@example.test`;
  const adminEmail = `keeper${tag}@example.test`;
  const orgName = `Deep Lake ${tag}`;

  beforeAll(async () => {
    requireChromium();
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const port = await freePort();
    stack = await startInferenceStack({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, SMTP_URL: `smtp://mailer:smtp-pass@127.0.0.1:${smtpPort}` });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  /** A browser context (signed in with a session token when given) whose page errors fail the test. */
  const newPage = async (token?: string): Promise<Page> => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    if (token) await context.addCookies([{ name: 'baikal_session', value: token, url: stack.url }]);
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d|Failed to load resource/.test(message.text())) problems.push(message.text());
    });
    return page;
  };
  const open = async (page: Page, route: string) => {
    await page.goto(`${stack.url}/app/${route}`);
    await page.locator('main h1').first().waitFor();
    await page.waitForLoadState('networkidle');
  };
  /** The invitation link in the (only) message to `address`, once it has arrived. */
  const invitationLink = async (address: string): Promise<string> => {
    await expect.poll(() => delivered.filter((m) => m.to.includes(address)).length, { timeout: 15_000 }).toBe(1);
    const text = decodeMail(delivered.find((m) => m.to.includes(address))!.raw);
    const link = /(https?:\/\/\S+\/app\/invite\?token=[^\s"<>]+)/.exec(text)?.[1];
    expect(link, text).toBeDefined();
    return link!;
  };
  /** The owner founds the organization in the cabinet, which switches to it; its id. */
  const founds = async (page: Page): Promise<string> => {
    await open(page, 'org/new');
    await page.getByLabel('Name').fill(orgName);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.waitForURL(/\/app\/org\/members$/);
    const [organization] = await stack.db.query<{ id: string }>('select id from organizations where name = $1', [orgName]);
    expect(organization).toBeDefined();
    expect(await page.getByLabel('Account or organization').inputValue()).toBe(organization!.id);
    return organization!.id;
  };
  /** A visitor opens the mailed link, signs up from it (the address filled in), comes back, accepts and is switched to the organization. */
  const signsUpAndAccepts = async (page: Page, link: string, orgId: string) => {
    await page.goto(link);
    await page.getByTestId('invitation').getByText(`You are invited to join ${orgName} as member.`).waitFor();
    await page.getByRole('link', { name: 'Sign up' }).last().click();
    await page.waitForURL(/\/app\/sign-up\?/);
    expect(await page.getByLabel('E-mail').inputValue()).toBe(memberEmail);
    await page.getByLabel('Username').fill(memberName);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/app\/invite\?token=/);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.waitForURL(/\/app\/dashboard$/);
    await expect.poll(() => page.getByLabel('Account or organization').inputValue()).toBe(orgId);
  };
  /** A signed-in browser switched to the organization in the header, on its members page. */
  const membersPage = async (token: string, orgId: string): Promise<Page> => {
    const page = await newPage(token);
    await open(page, 'dashboard');
    await page.getByLabel('Account or organization').selectOption(orgId);
    await page.getByRole('link', { name: 'Members' }).click();
    await page.locator('[data-testid=members]').waitFor();
    return page;
  };
  const chat = async (key: string) => {
    const id = requestId('org');
    const response = await fetch(`${stack.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hello from the team [sim:words=3]' }] }),
    });
    await response.text();
    return { status: response.status, id };
  };

  it('owner invites, the member signs up from the mailed link and spends with an organization key, the owner sees it live, an admin removes the member and the key stops', async () => {
    // The owner: an account with a verified e-mail, signed in by its session.
    const owner = await registerRest(stack.url);
    await stack.db.query('update users set email_verified = true where id = $1', [owner.account.user_id]);
    const ownerPage = await newPage(owner.token);
    const orgId = await founds(ownerPage);

    // Funded through the ledger as an operator does (an admin adjustment to the organization's id).
    const operator = await processAdmin(stack);
    await fund(stack, operator, orgId, '10');

    for (const [email, role] of [[memberEmail, 'member'], [adminEmail, 'admin']] as const) {
      await ownerPage.getByLabel('E-mail').fill(email);
      await ownerPage.getByLabel('Role').selectOption({ label: role });
      await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
      await ownerPage.getByText(`Invitation sent to ${email}.`).waitFor();
    }

    // The member opens the mailed link in the browser, signs up there and comes back to accept.
    const memberPage = await newPage();
    await signsUpAndAccepts(memberPage, await invitationLink(memberEmail), orgId);
    const [member] = await stack.db.query<{ id: string }>('select id from users where username = $1', [memberName]);

    // The admin joins by their link (over the API) and opens the members page in their own browser.
    const admin = await registerRest(stack.url);
    const adminToken = new URL(await invitationLink(adminEmail)).searchParams.get('token')!;
    const accepted = await http(stack.url, 'POST', '/graphql', { token: admin.token, body: { query: 'mutation($t: String!) { acceptInvitation(token: $t) { id role } }', variables: { t: adminToken } } });
    expect(accepted.body, accepted.text).toMatchObject({ data: { acceptInvitation: { id: orgId, role: 'ADMIN' } } });

    // The owner's members page in a second browser context, left open from here on (not reloaded).
    const watch = await membersPage(owner.token, orgId);
    const memberRow = watch.locator(`[data-testid=members] tr[data-user-id="${member!.id}"]`);
    await memberRow.getByRole('cell', { name: memberName, exact: true }).waitFor();
    expect(await memberRow.getByTestId('month-spent').textContent()).toBe('$0.00');
    await watch.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));

    // The member makes a key of the organization in the Keys page (in-app navigation: the raw key shows once).
    await memberPage.getByRole('link', { name: 'API keys' }).click();
    await memberPage.getByText(`Keys of the organization ${orgName}`, { exact: false }).waitFor();
    await memberPage.getByLabel('Name').fill('team-key');
    await memberPage.getByRole('button', { name: 'Create key' }).click();
    const key = (await memberPage.getByTestId('raw-key').textContent())!.trim();
    expect(key).toMatch(/^baikal-sk-/);
    const [keyRow] = await stack.db.query<{ user_id: string; created_by: string }>('select user_id, created_by from api_keys where label = $1', ['team-key']);
    expect(keyRow).toEqual({ user_id: orgId, created_by: member!.id });

    const call = await chat(key);
    expect(call.status).toBe(200);
    await usageEventOf(stack, call.id, 15_000);
    const [spent] = await stack.db.query<{ spend: string }>(
      `select coalesce(sum(e.amount_usd), 0)::text as spend from usage_events e join api_keys k on k.id = e.api_key_id where k.created_by = $1`,
      [member!.id],
    );
    expect(Number(spent!.spend)).toBeGreaterThan(0);
    await expect.poll(() => memberRow.getByTestId('month-spent').textContent(), { timeout: 15_000 }).toBe(usd(spent!.spend));
    expect(await watch.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce === true)).toBe(true);
    // The owner's usage page lists the request under the member's name, and filters by member.
    await ownerPage.getByRole('link', { name: 'Usage' }).click();
    await ownerPage.locator('[data-testid=usage-table] tbody tr').first().getByRole('cell', { name: memberName, exact: true }).waitFor();
    await ownerPage.getByLabel('Member').selectOption({ label: memberName });
    await ownerPage.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => ownerPage.locator('[data-testid=usage-table] tbody tr').count()).toBe(1);

    // The admin removes the member in the browser; the member's organization key stops at once.
    const adminPage = await membersPage(admin.token, orgId);
    adminPage.once('dialog', (dialog) => void dialog.accept());
    await adminPage.getByRole('button', { name: `Remove ${memberName}` }).click();
    await adminPage.locator(`[data-testid=members] tr[data-user-id="${member!.id}"]`).waitFor({ state: 'detached' });
    expect((await chat(key)).status).toBe(401);
    expect(await stack.db.query('select 1 from organization_members where organization_id = $1 and user_id = $2', [orgId, member!.id])).toHaveLength(0);
    expect(problems).toEqual([]);
  }, 180_000);
});
