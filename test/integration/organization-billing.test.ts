import { Decimal } from 'decimal.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { maskName } from '../../src/usage/analytics.service.js';
import { http } from '../helpers/clients.js';
import { ledgerOf, MODELS, useOrgBillingGateway, type Person } from '../helpers/org-billing.js';

/**
 * Issue 56, "a wallet per organization" and "what a team sees": an organization funded by an invoice its billing
 * member made (paid through the checkout webhook, credited to the organization's own ledger), usage by member and
 * key after real /v1 calls with two members' organization keys, the month's statement against the ledger, and the
 * leaderboard naming the organization once.
 */
const { state, person, organization, orgKey, chat, pay, gql } = useOrgBillingGateway();
const get = (path: string, who: Person, headers: Record<string, string> = {}) => http(state.gw.url, 'GET', path, { token: who.token, headers });
const NAME = 'Acme <Team> & Co';

let owner: Person, billing: Person, admin: Person, alice: Person, bob: Person, outsider: Person;
let orgId: string;
let aliceKey: { id: string; key: string }, bobKey: { id: string; key: string };
let invoice: any;
const month = new Date().toISOString().slice(0, 7);

beforeAll(async () => {
  [owner, billing, admin, alice, bob, outsider] = await Promise.all([person(), person(), person(), person(), person(), person()]);
  await state.gw.db.query(`update users set username = $2 where id = $1`, [alice.userId, 'alice_the_member']);
  await state.gw.db.query(`update users set username = $2 where id = $1`, [bob.userId, 'bob_the_member']);
  orgId = await organization(NAME, owner, [[billing, 'billing'], [admin, 'admin'], [alice, 'member'], [bob, 'member']]);
});

describe('funding the organization’s wallet', () => {
  it('a billing member’s invoice, paid through the checkout, credits the organization (paid and bonus), not the member', async () => {
    const created = await http(state.gw.url, 'POST', `/orgs/${orgId}/invoices`, { token: billing.token, body: { amount_usd: '100', method: 'rub_card' } });
    expect(created.status, created.text).toBe(201);
    invoice = created.body;
    expect(invoice).toMatchObject({ usd_credit: '100', bonus_usd: '5', status: 'pending', currency: 'RUB' });
    await pay(invoice);
    const [org] = await state.gw.db.query<{ paid: string; bonus: string }>('select balance_paid_usd::text as paid, balance_bonus_usd::text as bonus from users where id = $1', [orgId]);
    expect(Number(org!.paid)).toBe(100);
    expect(Number(org!.bonus)).toBe(5);
    const [member] = await state.gw.db.query<{ total: string }>('select (balance_paid_usd + balance_bonus_usd)::text as total from users where id = $1', [billing.userId]);
    expect(Number(member!.total)).toBe(0);
    const ledger = await ledgerOf(state.gw, orgId);
    expect(Number(ledger.ledger)).toBe(105);
    expect(ledger.balance).toBe(ledger.ledger);
    const balance = await get(`/orgs/${orgId}/balance`, billing);
    expect(balance.body).toMatchObject({ paid_usd: '100', bonus_usd: '5', balance_usd: '105' });
    const listed = await get(`/orgs/${orgId}/invoices`, owner);
    expect(listed.body.items.map((i: any) => [i.id, i.status])).toEqual([[invoice.id, 'paid']]);
    // The member's own invoices are theirs: the organization's is not among them.
    expect((await get('/payments/invoices', billing)).body.items).toEqual([]);
  });

  it('a plain member or an admin gets 403, an outsider 404; the maker must be verified and have accepted the agreement', async () => {
    const body = { amount_usd: '10', method: 'rub_card' };
    const post = (who: Person) => http(state.gw.url, 'POST', `/orgs/${orgId}/invoices`, { token: who.token, body });
    const member = await post(alice);
    expect(member.status).toBe(403);
    expect(member.body.code).toBe('organization_role_required');
    expect((await post(admin)).status).toBe(403);
    expect((await post(outsider)).status).toBe(404);
    expect((await get(`/orgs/${orgId}/invoices`, alice)).status).toBe(403);
    const unverified = await person({ verified: false });
    const notAccepted = await person({ accepted: false });
    await state.gw.db.query(`insert into organization_members (organization_id, user_id, role) values ($1, $2, 'billing'), ($1, $3, 'billing')`, [orgId, unverified.userId, notAccepted.userId]);
    const refusedUnverified = await post(unverified);
    expect(refusedUnverified.status).toBe(403);
    expect(refusedUnverified.body.code).toBe('email_not_verified');
    const refusedAgreement = await post(notAccepted);
    expect(refusedAgreement.status).toBe(403);
    expect(refusedAgreement.body.code).toBe('agreement_required');
    await state.gw.db.query(`delete from organization_members where organization_id = $1 and user_id in ($2, $3)`, [orgId, unverified.userId, notAccepted.userId]);
    const [{ n }] = await state.gw.db.query<{ n: number }>('select count(*)::int as n from invoices where user_id = $1', [orgId]);
    expect(n).toBe(1);
  });
});

describe('usage by member and by key', () => {
  beforeAll(async () => {
    aliceKey = await orgKey(orgId, alice, 'alice laptop');
    bobKey = await orgKey(orgId, bob, 'bob ci');
    await chat(aliceKey.key, MODELS[0], 5);
    await chat(aliceKey.key, MODELS[1], 7);
    await chat(bobKey.key, MODELS[0], 40);
    await state.gw.services.usage.flush();
  });

  it('writes the events under the organization and lists them with the member and the key', async () => {
    const [{ n }] = await state.gw.db.query<{ n: number }>('select count(*)::int as n from usage_events where user_id = $1', [orgId]);
    expect(n).toBe(3);
    const all = await get(`/orgs/${orgId}/usage`, owner);
    expect(all.status, all.text).toBe(200);
    expect(all.body.items).toHaveLength(3);
    const byMember = (items: any[]) => items.map((e) => `${e.member_name}/${e.api_key_label}`).sort();
    expect(byMember(all.body.items)).toEqual(['alice_the_member/alice laptop', 'alice_the_member/alice laptop', 'bob_the_member/bob ci']);
    expect(all.body.items.every((e: any) => e.member_id === alice.userId || e.member_id === bob.userId)).toBe(true);
    const onlyBob = await get(`/orgs/${orgId}/usage?member_id=${bob.userId}`, billing);
    expect(byMember(onlyBob.body.items)).toEqual(['bob_the_member/bob ci']);
    const oneKey = await get(`/orgs/${orgId}/usage?api_key_id=${aliceKey.id}`, admin);
    expect(oneKey.body.items).toHaveLength(2);
  });

  it('GraphQL: the same events with the member and the key, and the summary by member', async () => {
    const listed = await gql('query($id: ID!) { organizationUsage(organizationId: $id) { memberId memberName apiKey { id label } amountUsd } }', { id: orgId }, admin.token);
    expect(listed.errors).toBeUndefined();
    expect(listed.data.organizationUsage.map((e: any) => `${e.memberName}/${e.apiKey.label}`).sort()).toEqual(['alice_the_member/alice laptop', 'alice_the_member/alice laptop', 'bob_the_member/bob ci']);
    const summary = await gql('query($id: ID!) { organizationUsageSummary(organizationId: $id, groupBy: MEMBER) { groupBy totals { requests } groups { key label } } }', { id: orgId }, bob.token);
    expect(summary.data.organizationUsageSummary).toEqual({ groupBy: 'MEMBER', totals: { requests: 1 }, groups: [{ key: bob.userId, label: 'bob_the_member' }] });
  });

  it('a plain member sees only their own, whatever they ask for', async () => {
    const own = await get(`/orgs/${orgId}/usage`, alice);
    expect(own.body.items.map((e: any) => e.member_id)).toEqual([alice.userId, alice.userId]);
    const asked = await get(`/orgs/${orgId}/usage?member_id=${bob.userId}`, alice);
    expect(asked.body.items.map((e: any) => e.member_id)).toEqual([alice.userId, alice.userId]);
    const bobsKey = await get(`/orgs/${orgId}/usage?api_key_id=${bobKey.id}`, alice);
    expect(bobsKey.body.items).toEqual([]);
    const summary = await get(`/orgs/${orgId}/usage/summary?group_by=member`, alice);
    expect(summary.body.groups.map((g: any) => g.key)).toEqual([alice.userId]);
    expect((await get(`/orgs/${orgId}/usage`, outsider)).status).toBe(404);
  });

  it('summaries by member, key and model add up to the events; the timeseries too', async () => {
    const rows = await state.gw.db.query<{ api_key_id: string; model: string; amount_usd: string }>('select api_key_id, model, amount_usd::text from usage_events where user_id = $1', [orgId]);
    const sum = (filter: (r: (typeof rows)[number]) => boolean) => rows.filter(filter).reduce((s, r) => s.plus(r.amount_usd), new Decimal(0)).toString();
    const members = await get(`/orgs/${orgId}/usage/summary?group_by=member`, owner);
    expect(members.body.totals.requests).toBe(3);
    const groups = Object.fromEntries(members.body.groups.map((g: any) => [g.label, g]));
    expect(groups.alice_the_member.spend_usd).toBe(sum((r) => r.api_key_id === aliceKey.id));
    expect(groups.bob_the_member.spend_usd).toBe(sum((r) => r.api_key_id === bobKey.id));
    const keys = await get(`/orgs/${orgId}/usage/summary?group_by=key`, owner);
    expect(keys.body.groups.map((g: any) => g.label).sort()).toEqual(['alice laptop', 'bob ci']);
    const models = await get(`/orgs/${orgId}/usage/summary?group_by=model`, owner);
    expect(Object.fromEntries(models.body.groups.map((g: any) => [g.key, g.spend_usd]))).toEqual({ [MODELS[0]]: sum((r) => r.model === MODELS[0]), [MODELS[1]]: sum((r) => r.model === MODELS[1]) });
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    for (const [who, expected] of [[owner, 3], [alice, 2]] as const) {
      const series = await get(`/orgs/${orgId}/usage/timeseries?from=${from}&to=${to}&bucket=minute`, who);
      expect(series.status, series.text).toBe(200);
      expect(series.body.points.reduce((n: number, p: any) => n + p.requests, 0)).toBe(expected);
    }
  });

  it('exports CSV with the member and the key', async () => {
    const csv = await get(`/orgs/${orgId}/usage.csv`, owner);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toContain('member');
    expect(lines).toHaveLength(4);
    expect(csv.text).toContain('alice_the_member');
    expect(csv.text).toContain('bob ci');
    const mine = await get(`/orgs/${orgId}/usage.csv`, bob);
    expect(mine.text).not.toContain('alice_the_member');
  });
});

describe('the monthly statement', () => {
  it('opening + invoices paid - spend = closing, equal to the ledger; spend by member, model and key sums to it', async () => {
    const statement = await get(`/orgs/${orgId}/statements/${month}`, billing);
    expect(statement.status, statement.text).toBe(200);
    const s = statement.body;
    const ledger = await ledgerOf(state.gw, orgId);
    const [spent] = await state.gw.db.query<{ spend: string }>(`select (-sum(amount_usd))::text as spend from transactions where user_id = $1 and kind = 'usage'`, [orgId]);
    expect(s).toMatchObject({ organization_name: NAME, opening_balance: '0', invoices_credited: '105', other_changes: '0' });
    expect(new Decimal(s.total_spend).equals(spent!.spend)).toBe(true);
    expect(new Decimal(s.total_spend).greaterThan(0)).toBe(true);
    expect(new Decimal(s.opening_balance).plus(s.invoices_credited).minus(s.total_spend).equals(s.closing_balance)).toBe(true);
    expect(new Decimal(s.closing_balance).equals(ledger.ledger)).toBe(true);
    expect(new Decimal(s.closing_balance).equals(ledger.balance)).toBe(true);
    const total = (items: any[]) => items.reduce((sum, i) => sum.plus(i.spend), new Decimal(0)).toString();
    for (const list of [s.by_member, s.by_model, s.by_key]) expect(total(list)).toBe(new Decimal(s.total_spend).toString());
    expect(s.by_member.map((m: any) => m.name)).toEqual(expect.arrayContaining(['alice_the_member', 'bob_the_member']));
    expect(s.by_member.find((m: any) => m.user_id === alice.userId).requests).toBe(2);
    expect(s.invoices).toEqual([expect.objectContaining({ id: invoice.id, amount: '100', bonus: '5', status: 'paid' })]);
    // The month after opens where this one closes; the month before had nothing.
    const [year, m] = month.split('-').map(Number) as [number, number];
    const next = new Date(Date.UTC(year, m, 1)).toISOString().slice(0, 7);
    const previous = new Date(Date.UTC(year, m - 2, 1)).toISOString().slice(0, 7);
    expect((await get(`/orgs/${orgId}/statements/${next}`, owner)).body).toMatchObject({ opening_balance: s.closing_balance, closing_balance: s.closing_balance, total_spend: '0' });
    expect((await get(`/orgs/${orgId}/statements/${previous}`, owner)).body).toMatchObject({ opening_balance: '0', closing_balance: '0', invoices: [] });
  });

  it('GraphQL answers the same statement', async () => {
    const rest = (await get(`/orgs/${orgId}/statements/${month}`, owner)).body;
    const result = await gql(
      'query($id: ID!, $month: String!) { organizationStatement(organizationId: $id, month: $month) { openingBalance closingBalance totalSpend invoicesCredited invoices { id amount status paidAt } byMember { userId name spend requests } byKey { apiKeyId label memberName spend } } }',
      { id: orgId, month },
      owner.token,
    );
    expect(result.errors).toBeUndefined();
    const s = result.data.organizationStatement;
    expect([s.openingBalance, s.closingBalance, s.totalSpend, s.invoicesCredited]).toEqual([rest.opening_balance, rest.closing_balance, rest.total_spend, rest.invoices_credited]);
    expect(s.byKey.map((k: any) => `${k.memberName}/${k.label}`).sort()).toEqual(['alice_the_member/alice laptop', 'bob_the_member/bob ci']);
  });

  it('as CSV and as a printable page in either language, with the member names and the name escaped', async () => {
    const csv = await get(`/orgs/${orgId}/statements/${month}.csv`, owner);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.text).toContain('alice_the_member');
    expect(csv.text).toContain('closing_balance');
    const en = await get(`/orgs/${orgId}/statements/${month}.html?lang=en`, billing);
    expect(en.status).toBe(200);
    expect(en.headers.get('content-type')).toMatch(/^text\/html/);
    expect(en.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(en.text).toContain('Opening balance');
    expect(en.text).toContain('bob_the_member');
    expect(en.text).toContain('Acme &lt;Team&gt; &amp; Co');
    expect(en.text).not.toContain('<Team>');
    const ru = await get(`/orgs/${orgId}/statements/${month}.html`, billing, { 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.5' });
    expect(ru.text).toContain('Баланс на начало');
    expect(ru.text).toContain('<html lang="ru">');
  });

  it('is for billing roles: a member and an admin 403, an outsider 404, a bad month 422', async () => {
    expect((await get(`/orgs/${orgId}/statements/${month}`, alice)).status).toBe(403);
    expect((await get(`/orgs/${orgId}/statements/${month}.html`, admin)).status).toBe(403);
    expect((await get(`/orgs/${orgId}/statements/${month}.csv`, outsider)).status).toBe(404);
    const bad = await get(`/orgs/${orgId}/statements/2026-13`, owner);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['path', 'month']);
  });
});

describe('the leaderboard', () => {
  it('counts the organization once, under its name', async () => {
    const board = await http(state.gw.url, 'GET', '/leaderboard/daily?limit=100');
    expect(board.status).toBe(200);
    const ours = board.body.items.filter((e: any) => e.user === maskName(NAME));
    expect(ours).toHaveLength(1);
    const [tokens] = await state.gw.db.query<{ n: string }>('select sum(prompt_tokens + completion_tokens)::text as n from usage_events where user_id = $1', [orgId]);
    expect(ours[0].tokens).toBe(Number(tokens!.n));
    expect(board.body.items.map((e: any) => e.user)).not.toContain('anonymous');
  });
});
