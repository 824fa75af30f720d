import { TRPCClientError } from '@trpc/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { http, trpcClient } from '../helpers/clients.js';
import { ORGANIZATION_BILLING_SURFACE } from './organization-billing-surface.js';
import { useOrgBillingGateway, type Person } from '../helpers/org-billing.js';

/**
 * Issue 56: who may use each organization money field and route (wallet, usage, invoices, statements), on REST,
 * GraphQL and tRPC, for every role, an outsider and an anonymous caller. An outsider gets not-found for the
 * organization's real id exactly as for an id that exists nowhere; a member whose role lacks the capability 403.
 */
const { state, person, organization, gql } = useOrgBillingGateway();

type Who = 'owner' | 'admin' | 'billing' | 'member';
const ALL: Who[] = ['owner', 'admin', 'billing', 'member'];
const BILLING: Who[] = ['owner', 'billing'];
/** Every operation of the surface, with the roles that may use it. */
const RULES = {
  balance: ['owner', 'admin', 'billing'],
  usage: ALL,
  usageCsv: ALL,
  usageSummary: ALL,
  usageTimeseries: ALL,
  invoices: BILLING,
  createInvoice: BILLING,
  statement: BILLING,
  statementCsv: BILLING,
  statementHtml: BILLING,
} satisfies Record<string, Who[]>;
type Operation = keyof typeof RULES;

const MONTH = new Date().toISOString().slice(0, 7);
const FROM = new Date(Date.now() - 86_400_000).toISOString();
const TO = new Date().toISOString();
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const REST: Record<Operation, [string, (id: string) => string, unknown?]> = {
  balance: ['GET', (id) => `/orgs/${id}/balance`],
  usage: ['GET', (id) => `/orgs/${id}/usage`],
  usageCsv: ['GET', (id) => `/orgs/${id}/usage.csv`],
  usageSummary: ['GET', (id) => `/orgs/${id}/usage/summary?group_by=key`],
  usageTimeseries: ['GET', (id) => `/orgs/${id}/usage/timeseries?from=${FROM}&to=${TO}`],
  invoices: ['GET', (id) => `/orgs/${id}/invoices`],
  createInvoice: ['POST', (id) => `/orgs/${id}/invoices`, { amount_usd: '10', method: 'rub_card' }],
  statement: ['GET', (id) => `/orgs/${id}/statements/${MONTH}`],
  statementCsv: ['GET', (id) => `/orgs/${id}/statements/${MONTH}.csv`],
  statementHtml: ['GET', (id) => `/orgs/${id}/statements/${MONTH}.html`],
};

/** The GraphQL field of each operation (the CSV and HTML forms are REST's alone). */
const GRAPHQL: Partial<Record<Operation, string>> = {
  balance: 'query($id: ID!) { organizationBalance(organizationId: $id) { balanceUsd } }',
  usage: 'query($id: ID!) { organizationUsage(organizationId: $id) { id memberName } }',
  usageSummary: 'query($id: ID!) { organizationUsageSummary(organizationId: $id, groupBy: MODEL) { totals { requests } } }',
  usageTimeseries: `query($id: ID!) { organizationUsageTimeseries(organizationId: $id, from: "${FROM}", to: "${TO}") { bucket } }`,
  invoices: 'query($id: ID!) { organizationInvoices(organizationId: $id) { id } }',
  createInvoice: 'mutation($id: ID!) { createOrganizationInvoice(organizationId: $id, amountUsd: "10", method: "rub_card") { id } }',
  statement: `query($id: ID!) { organizationStatement(organizationId: $id, month: "${MONTH}") { closingBalance } }`,
};

/** The tRPC procedure of each operation. */
const TRPC: Partial<Record<Operation, (c: ReturnType<typeof trpcClient>, organizationId: string) => Promise<unknown>>> = {
  balance: (c, organizationId) => c.organizationBilling.balance.query({ organizationId }),
  usage: (c, organizationId) => c.organizationBilling.usage.query({ organizationId }),
  usageSummary: (c, organizationId) => c.organizationBilling.usageSummary.query({ organizationId, groupBy: 'member' }),
  usageTimeseries: (c, organizationId) => c.organizationBilling.usageTimeseries.query({ organizationId, from: FROM, to: TO }),
  invoices: (c, organizationId) => c.organizationBilling.invoices.query({ organizationId }),
  createInvoice: (c, organizationId) => c.organizationBilling.createInvoice.mutate({ organizationId, amountUsd: '10', method: 'rub_card' }),
  statement: (c, organizationId) => c.organizationBilling.statement.query({ organizationId, month: MONTH }),
};

const OPERATIONS = Object.keys(RULES) as Operation[];
let people: Record<Who | 'outsider', Person>;
let orgId: string;
/** Another organization the outsider owns: being a member elsewhere opens nothing here. */
let otherOrgId: string;

beforeAll(async () => {
  const [owner, admin, billing, member, outsider] = await Promise.all([person(), person(), person(), person(), person()]);
  people = { owner, admin, billing, member, outsider };
  orgId = await organization('Authz Org', owner, [[admin, 'admin'], [billing, 'billing'], [member, 'member']]);
  otherOrgId = await organization('Outsider Org', outsider);
});

async function restStatus(op: Operation, id: string, token?: string): Promise<number> {
  const [method, path, body] = REST[op];
  return (await http(state.gw.url, method, path(id), { token, ...(body ? { body } : {}) })).status;
}

async function graphqlCode(op: Operation, id: string, token?: string): Promise<string> {
  const result = await gql(GRAPHQL[op]!, { id }, token);
  return result.errors?.[0]?.extensions?.code ?? 'ok';
}

async function trpcCode(op: Operation, id: string, token?: string): Promise<string> {
  try {
    await TRPC[op]!(trpcClient(state.gw.url, token), id);
    return 'ok';
  } catch (error) {
    if (error instanceof TRPCClientError) return (error.data as { code: string }).code;
    throw error;
  }
}

describe.each(ALL)('as %s', (who) => {
  it.each(OPERATIONS)('%s: answered when the role allows it, 403 otherwise (REST, GraphQL, tRPC)', async (op) => {
    const allowed = (RULES[op] as Who[]).includes(who);
    const token = people[who].token;
    const status = await restStatus(op, orgId, token);
    expect(status, `${who} ${op}`).toBe(allowed ? (op === 'createInvoice' ? 201 : 200) : 403);
    if (GRAPHQL[op]) expect(await graphqlCode(op, orgId, token)).toBe(allowed ? 'ok' : 'FORBIDDEN');
    if (TRPC[op]) expect(await trpcCode(op, orgId, token)).toBe(allowed ? 'ok' : 'FORBIDDEN');
  });
});

describe('outsiders and anonymous callers', () => {
  it.each(OPERATIONS)('%s: an outsider gets not-found for the real id as for an unknown one; a member elsewhere too', async (op) => {
    const token = people.outsider.token;
    for (const id of [orgId, UNKNOWN]) {
      expect(await restStatus(op, id, token), `${op} ${id}`).toBe(404);
      if (GRAPHQL[op]) expect(await graphqlCode(op, id, token)).toBe('NOT_FOUND');
      if (TRPC[op]) expect(await trpcCode(op, id, token)).toBe('NOT_FOUND');
    }
    // The owner of this organization is an outsider to the other one.
    expect(await restStatus(op, otherOrgId, people.owner.token)).toBe(404);
  });

  it.each(OPERATIONS)('%s: without a session, 401 / UNAUTHENTICATED / UNAUTHORIZED', async (op) => {
    expect(await restStatus(op, orgId)).toBe(401);
    if (GRAPHQL[op]) expect(await graphqlCode(op, orgId)).toBe('UNAUTHENTICATED');
    if (TRPC[op]) expect(await trpcCode(op, orgId)).toBe('UNAUTHORIZED');
  });

  it('a malformed organization id is a 422 located at the path', async () => {
    const response = await http(state.gw.url, 'GET', '/orgs/not-a-uuid/balance', { token: people.owner.token });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['path', 'organization_id']);
  });

  it('its tables name exactly the surface the main authorization suite counts as listed', () => {
    const routes = OPERATIONS.map((op) => `${REST[op][0]} ${REST[op][1]('{organization_id}').split('?')[0]!.replace(`/${MONTH}`, '/{month}')}`);
    expect(routes.sort()).toEqual([...ORGANIZATION_BILLING_SURFACE.routes].sort());
    const fields = Object.values(GRAPHQL).map((document) => /\{ (\w+)\(/.exec(document)![1]!);
    expect(fields.sort()).toEqual([...ORGANIZATION_BILLING_SURFACE.fields].sort());
    expect(Object.keys(TRPC).map((name) => `organizationBilling.${name}`).sort()).toEqual([...ORGANIZATION_BILLING_SURFACE.procedures].sort());
  });

  it('the invoices the outsider could not make do not exist; every one made is the organization’s, by a billing role', async () => {
    const rows = await state.gw.db.query<{ user_id: string }>('select user_id from invoices');
    expect(rows.length).toBe(BILLING.length * 3);
    expect(rows.every((r) => r.user_id === orgId)).toBe(true);
  });
});
