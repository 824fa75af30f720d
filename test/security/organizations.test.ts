import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { buildSchema, type GraphQLObjectType } from 'graphql';
import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ALL_ROUTES } from '../../rest-shim/openapi/router.js';
import { appRouter } from '../../src/trpc/router.js';
import { http } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';
import { organizationWithRoles, outboxInvitation, verifiedAccount, type Account, type RoleName } from '../helpers/organizations.js';
import { ORGANIZATION_BILLING_SURFACE as BILLING } from './organization-billing-surface.js';
import { ROOT } from '../helpers/process.js';

/**
 * Issue 56, the authorization suite of organizations: every organization field of GraphQL, every /orgs route and
 * every organizations tRPC procedure, called by each role (owner, admin, billing, member), by an outsider (a member of
 * ANOTHER organization using this one's ids: not-found on everything, never 403) and anonymously (401, the invitation
 * preview aside). The tables below are complete: a new organization field, route or procedure fails the first tests
 * until it is listed here with who may use it.
 */
const gw = useTestGateway();

type Outcome = 'ok' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT';
/** The caller of one call: a role of the organization, a member of another one, or nobody. */
type Caller = RoleName | 'outsider' | 'anonymous';

const EVERY_ROLE: Record<RoleName, Outcome> = { owner: 'ok', admin: 'ok', billing: 'ok', member: 'ok' };
/** `manageMembers`: owner and admin. */
const MANAGERS: Record<RoleName, Outcome> = { owner: 'ok', admin: 'ok', billing: 'FORBIDDEN', member: 'FORBIDDEN' };
const OWNER_ONLY: Record<RoleName, Outcome> = { owner: 'ok', admin: 'FORBIDDEN', billing: 'FORBIDDEN', member: 'FORBIDDEN' };

/** What one call names: the organization, and what a step before it made fresh (a member, an invitation, a key). */
interface Args {
  organizationId: string;
  userId: string;
  invitationId: string;
  keyId: string;
  token: string;
}

interface Fixture {
  id: string;
  members: Record<RoleName, Account>;
}

interface Operation {
  /** The GraphQL field; `gql` its document over the variables it uses. */
  field: string;
  gql: string;
  /** The REST route as the interface description names it, and its body. */
  rest: string;
  body?: (a: Args) => Record<string, unknown>;
  /** The tRPC procedure and its input. */
  trpc: string;
  input?: (a: Args) => Record<string, unknown>;
  outcomes: Record<RoleName, Outcome>;
  /** Names an organization by id: an outsider gets NOT_FOUND. Operations by token or on one's own list are not. */
  scoped: boolean;
  /** Needs no sign-in. */
  public?: boolean;
  /** Makes what the call acts on, fresh for every call. */
  prepare?: (fixture: Fixture) => Promise<Partial<Args>>;
  /** Changes the caller's own standing: runs on an organization of its own per surface, the owner last. */
  ownFixture?: boolean;
}

const org = (a: Args) => ({ organizationId: a.organizationId });

const OPERATIONS: Operation[] = [
  { field: 'organizations', gql: 'query { organizations { id } }', rest: 'GET /orgs', trpc: 'organizations.list', outcomes: EVERY_ROLE, scoped: false },
  { field: 'organization', gql: 'query($organizationId: ID!) { organization(id: $organizationId) { id } }', rest: 'GET /orgs/{organization_id}', trpc: 'organizations.get', input: org, outcomes: EVERY_ROLE, scoped: true },
  { field: 'organizationMembers', gql: 'query($organizationId: ID!) { organizationMembers(organizationId: $organizationId) { userId } }', rest: 'GET /orgs/{organization_id}/members', trpc: 'organizations.members', input: org, outcomes: EVERY_ROLE, scoped: true },
  { field: 'organizationInvitations', gql: 'query($organizationId: ID!) { organizationInvitations(organizationId: $organizationId) { id } }', rest: 'GET /orgs/{organization_id}/invitations', trpc: 'organizations.invitations', input: org, outcomes: MANAGERS, scoped: true },
  { field: 'organizationKeys', gql: 'query($organizationId: ID!) { organizationKeys(organizationId: $organizationId) { id } }', rest: 'GET /orgs/{organization_id}/keys', trpc: 'organizations.keys', input: org, outcomes: EVERY_ROLE, scoped: true },
  { field: 'invitationPreview', gql: 'query($token: String!) { invitationPreview(token: $token) { email } }', rest: 'GET /orgs/invitations/{token}', trpc: 'organizations.previewInvitation', input: (a) => ({ token: a.token }), outcomes: EVERY_ROLE, scoped: false, public: true, prepare: (f) => freshInvitation(f) },
  { field: 'createOrganization', gql: 'mutation { createOrganization(input: { name: "Another" }) { id } }', rest: 'POST /orgs', body: () => ({ name: 'Another' }), trpc: 'organizations.create', input: () => ({ name: 'Another' }), outcomes: EVERY_ROLE, scoped: false },
  { field: 'updateOrganization', gql: 'mutation($organizationId: ID!) { updateOrganization(input: { organizationId: $organizationId, name: "Renamed" }) { id } }', rest: 'PATCH /orgs/{organization_id}', body: () => ({ name: 'Renamed' }), trpc: 'organizations.update', input: (a) => ({ ...org(a), name: 'Renamed' }), outcomes: MANAGERS, scoped: true },
  {
    field: 'inviteMember',
    gql: 'mutation($organizationId: ID!) { inviteMember(input: { organizationId: $organizationId, email: "invitee@example.test" }) { id } }',
    rest: 'POST /orgs/{organization_id}/invitations',
    body: () => ({ email: 'invitee@example.test' }),
    trpc: 'organizations.invite',
    input: (a) => ({ ...org(a), email: 'invitee@example.test' }),
    outcomes: MANAGERS,
    scoped: true,
  },
  {
    field: 'revokeInvitation',
    gql: 'mutation($organizationId: ID!, $invitationId: ID!) { revokeInvitation(organizationId: $organizationId, invitationId: $invitationId) }',
    rest: 'DELETE /orgs/{organization_id}/invitations/{invitation_id}',
    trpc: 'organizations.revokeInvitation',
    input: (a) => ({ ...org(a), invitationId: a.invitationId }),
    outcomes: MANAGERS,
    scoped: true,
    prepare: (f) => freshInvitation(f),
  },
  // By token: whoever holds the link joins (a member already in it keeps their role; the link is used up either way).
  // (The outsider joins too: its own organization per surface keeps the shared one's outsider an outsider.)
  { field: 'acceptInvitation', gql: 'mutation($token: String!) { acceptInvitation(token: $token) { id } }', rest: 'POST /orgs/invitations/{token}/accept', trpc: 'organizations.acceptInvitation', input: (a) => ({ token: a.token }), outcomes: EVERY_ROLE, scoped: false, ownFixture: true, prepare: (f) => freshInvitation(f) },
  {
    field: 'updateMember',
    gql: 'mutation($organizationId: ID!, $userId: ID!) { updateMember(input: { organizationId: $organizationId, userId: $userId, role: BILLING, monthlySpendCap: "3" }) { userId } }',
    rest: 'PATCH /orgs/{organization_id}/members/{user_id}',
    body: () => ({ role: 'billing', monthly_spend_cap: '3' }),
    trpc: 'organizations.updateMember',
    input: (a) => ({ ...org(a), userId: a.userId, role: 'billing', monthlySpendCap: '3' }),
    outcomes: MANAGERS,
    scoped: true,
    prepare: (f) => freshMember(f),
  },
  {
    field: 'removeMember',
    gql: 'mutation($organizationId: ID!, $userId: ID!) { removeMember(organizationId: $organizationId, userId: $userId) }',
    rest: 'DELETE /orgs/{organization_id}/members/{user_id}',
    trpc: 'organizations.removeMember',
    input: (a) => ({ ...org(a), userId: a.userId }),
    outcomes: MANAGERS,
    scoped: true,
    prepare: (f) => freshMember(f),
  },
  // Each member may leave; the owner must transfer ownership first.
  { field: 'leaveOrganization', gql: 'mutation($organizationId: ID!) { leaveOrganization(organizationId: $organizationId) }', rest: 'POST /orgs/{organization_id}/leave', trpc: 'organizations.leave', input: org, outcomes: { ...EVERY_ROLE, owner: 'CONFLICT' }, scoped: true, ownFixture: true },
  {
    field: 'transferOwnership',
    gql: 'mutation($organizationId: ID!, $userId: ID!) { transferOwnership(organizationId: $organizationId, userId: $userId) { id } }',
    rest: 'POST /orgs/{organization_id}/transfer',
    body: (a) => ({ user_id: a.userId }),
    trpc: 'organizations.transferOwnership',
    input: (a) => ({ ...org(a), userId: a.userId }),
    outcomes: OWNER_ONLY,
    scoped: true,
    ownFixture: true,
    prepare: async (f) => ({ userId: f.members.admin.userId }),
  },
  { field: 'createOrganizationKey', gql: 'mutation($organizationId: ID!) { createOrganizationKey(organizationId: $organizationId, input: { label: "k" }) { id } }', rest: 'POST /orgs/{organization_id}/keys', body: () => ({ label: 'k' }), trpc: 'organizations.createKey', input: (a) => ({ ...org(a), label: 'k' }), outcomes: EVERY_ROLE, scoped: true },
  // The owner's key: owners and admins revoke any key, the others only their own (someone else's is not found).
  {
    field: 'revokeOrganizationKey',
    gql: 'mutation($organizationId: ID!, $keyId: ID!) { revokeOrganizationKey(organizationId: $organizationId, keyId: $keyId) }',
    rest: 'DELETE /orgs/{organization_id}/keys/{key_id}',
    trpc: 'organizations.revokeKey',
    input: (a) => ({ ...org(a), keyId: a.keyId }),
    outcomes: { ...MANAGERS, billing: 'NOT_FOUND', member: 'NOT_FOUND' },
    scoped: true,
    prepare: (f) => freshKey(f),
  },
];

/** The subscriptions' organization argument (over graphql-ws, below): who may listen. */
const SUBSCRIPTIONS: Record<string, Record<RoleName, Outcome>> = {
  balanceChanged: { owner: 'ok', admin: 'ok', billing: 'ok', member: 'FORBIDDEN' },
  usageRecorded: EVERY_ROLE,
  keyEvents: EVERY_ROLE,
};

async function actorOf(account: Account) {
  return (await gw.services.accounts.authenticate(account.token))!;
}

async function freshInvitation(f: Fixture): Promise<Partial<Args>> {
  const email = `inv-${randomUUID()}@example.test`;
  const invitation = await gw.services.organizations.invite(await actorOf(f.members.owner), { organizationId: f.id, email }, 'http://127.0.0.1');
  return { invitationId: invitation.id, token: (await outboxInvitation(gw, email)).token };
}

async function freshMember(f: Fixture): Promise<Partial<Args>> {
  const account = await verifiedAccount(gw);
  await gw.db.query(`insert into organization_members (organization_id, user_id, role) values ($1, $2, 'member')`, [f.id, account.userId]);
  return { userId: account.userId };
}

async function freshKey(f: Fixture): Promise<Partial<Args>> {
  return { keyId: (await gw.services.organizations.createKey(await actorOf(f.members.owner), f.id, { label: 'owner' })).id };
}

function outcomeOfStatus(status: number): Outcome | string {
  if (status >= 200 && status < 300) return 'ok';
  return ({ 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 409: 'CONFLICT' } as Record<number, Outcome>)[status] ?? `HTTP ${status}`;
}

type Surface = 'graphql' | 'rest' | 'trpc';

async function call(surface: Surface, op: Operation, a: Args, token: string | undefined): Promise<string> {
  if (surface === 'graphql') {
    const result = await http(gw.url, 'POST', '/graphql', { token, body: { query: op.gql, variables: a } });
    const code = result.body?.errors?.[0]?.extensions?.code;
    return code ?? (result.body?.data ? 'ok' : `HTTP ${result.status}`);
  }
  if (surface === 'rest') {
    const [method, template] = op.rest.split(' ') as [string, string];
    const names: Record<string, string> = { organization_id: a.organizationId, user_id: a.userId, invitation_id: a.invitationId, key_id: a.keyId, token: encodeURIComponent(a.token) };
    const url = template.replace(/\{([a-z_]+)\}/g, (_, name: string) => names[name]!);
    return outcomeOfStatus((await http(gw.url, method, url, { token, body: op.body?.(a) ?? (method === 'POST' || method === 'PATCH' ? {} : undefined) })).status);
  }
  const procedure = (appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>)[op.trpc]!;
  const input = op.input?.(a);
  const response =
    procedure._def.type === 'query'
      ? await http(gw.url, 'GET', `/trpc/${op.trpc}${input ? `?input=${encodeURIComponent(JSON.stringify(input))}` : ''}`, { token })
      : await http(gw.url, 'POST', `/trpc/${op.trpc}`, { token, body: input ?? {} });
  return outcomeOfStatus(response.status);
}

const CALLERS: Caller[] = ['member', 'billing', 'admin', 'owner', 'outsider', 'anonymous'];

function expected(op: Operation, caller: Caller): Outcome {
  if (caller === 'anonymous') return op.public ? 'ok' : 'UNAUTHENTICATED';
  if (caller === 'outsider') return op.scoped ? 'NOT_FOUND' : 'ok';
  return op.outcomes[caller];
}

/** Every caller on every surface: the outcome table of one operation, actual against expected. */
async function outcomesOf(op: Operation, shared: Fixture, outsider: Account) {
  const actual: Record<string, string> = {};
  const wanted: Record<string, string> = {};
  for (const surface of ['graphql', 'rest', 'trpc'] as const) {
    const fixture = op.ownFixture ? await organizationWithRoles(gw) : shared;
    for (const caller of CALLERS) {
      const a: Args = { organizationId: fixture.id, userId: randomUUID(), invitationId: randomUUID(), keyId: randomUUID(), token: 'x'.repeat(43), ...(await op.prepare?.(fixture)) };
      const token = caller === 'anonymous' ? undefined : caller === 'outsider' ? outsider.token : fixture.members[caller].token;
      actual[`${surface} ${caller}`] = await call(surface, op, a, token);
      wanted[`${surface} ${caller}`] = expected(op, caller);
    }
  }
  return { actual, wanted };
}

describe('the tables are complete', () => {
  const schema = buildSchema(readFileSync(path.join(ROOT, 'schema/schema.graphql'), 'utf8'));
  const isOrganizational = (name: string, args: readonly { name: string }[]) => /organi[sz]ation|invitation|member/i.test(name) || args.some((arg) => arg.name === 'organizationId');

  it('lists every organization field of Query and Mutation, and every subscription taking an organization', () => {
    const fields = [schema.getQueryType(), schema.getMutationType()].flatMap((root) => Object.values((root as GraphQLObjectType).getFields()));
    expect(fields.filter((f) => isOrganizational(f.name, f.args)).map((f) => f.name).sort()).toEqual([...OPERATIONS.map((op) => op.field), ...BILLING.fields].sort());
    const subscriptions = Object.values(schema.getSubscriptionType()!.getFields()).filter((f) => f.args.some((arg) => arg.name === 'organizationId'));
    expect(subscriptions.map((f) => f.name).sort()).toEqual(Object.keys(SUBSCRIPTIONS).sort());
  });

  it('lists every /orgs route of the REST shim (as /openapi.json shows them)', () => {
    const routes = ALL_ROUTES.filter((route) => route.path.startsWith('/orgs')).map((route) => `${route.method.toUpperCase()} ${route.path}`);
    expect(routes.sort()).toEqual([...OPERATIONS.map((op) => op.rest), ...BILLING.routes].sort());
  });

  it('lists every organizations tRPC procedure', () => {
    const procedures = Object.keys(appRouter._def.procedures).filter((name) => name.startsWith('organization'));
    expect(procedures.sort()).toEqual([...OPERATIONS.map((op) => op.trpc), ...BILLING.procedures].sort());
  });
});

describe('who may use each organization field, route and procedure', () => {
  let shared: Fixture;
  let outsider: Account;

  it.each(OPERATIONS.map((op) => [op.field, op] as const))('%s: each role as listed, an outsider NOT_FOUND, anonymous UNAUTHENTICATED', async (_name, op) => {
    shared ??= await organizationWithRoles(gw, 'Audited');
    // The outsider belongs to an organization of their own and uses this one's ids.
    outsider ??= (await organizationWithRoles(gw, 'Elsewhere')).members.owner;
    const { actual, wanted } = await outcomesOf(op, shared, outsider);
    expect(actual).toEqual(wanted);
  }, 120_000);

  it('an outsider’s list never shows the organization, and nothing an outsider called changed it', async () => {
    const lists = await http(gw.url, 'GET', '/orgs', { token: outsider.token });
    expect(lists.body.map((o: { id: string }) => o.id)).not.toContain(shared.id);
    const [row] = await gw.db.query<{ n: number }>('select count(*)::int as n from organization_members where organization_id = $1 and user_id = $2', [shared.id, outsider.userId]);
    expect(row!.n).toBe(0);
  });
});


const SUBSCRIPTION_DOCUMENTS: Record<string, string> = {
  balanceChanged: 'subscription($organizationId: ID) { balanceChanged(organizationId: $organizationId) { balanceUsd } }',
  usageRecorded: 'subscription($organizationId: ID) { usageRecorded(organizationId: $organizationId) { amountUsd } }',
  keyEvents: 'subscription($organizationId: ID) { keyEvents(organizationId: $organizationId) { type keyId } }',
};

/**
 * One subscription's outcome: its first event ('ok'), its error's code, or 'silent' when nothing came within the wait
 * (usage: no request is made here). `trigger` runs once the subscription had time to start (a key the caller makes).
 */
async function subscriptionOutcome(field: string, organizationId: string, token: string | undefined, trigger?: () => Promise<unknown>): Promise<string> {
  const client = createClient({ url: `${gw.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: token ? { sessionToken: token } : {}, retryAttempts: 0, lazy: true });
  try {
    return await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('silent'), 1_500);
      const done = (outcome: string) => (clearTimeout(timer), resolve(outcome));
      client.subscribe(
        { query: SUBSCRIPTION_DOCUMENTS[field]!, variables: { organizationId } },
        {
          next: (result) => done(result.errors ? String(result.errors[0]?.extensions?.code) : 'ok'),
          error: (error) => done(Array.isArray(error) ? String(error[0]?.extensions?.code) : String(error)),
          complete: () => done('completed'),
        },
      );
      if (trigger) setTimeout(() => void trigger(), 400);
    });
  } finally {
    await client.dispose();
  }
}

describe('the organization’s events on the subscriptions', () => {
  it.each(Object.keys(SUBSCRIPTIONS))('%s(organizationId): each role as listed, an outsider NOT_FOUND, anonymous UNAUTHENTICATED', async (field) => {
    const fixture = await organizationWithRoles(gw, 'Listened');
    const outsider = (await organizationWithRoles(gw, 'Elsewhere')).members.owner;
    const actual: Record<string, string> = {};
    const wanted: Record<string, string> = {};
    for (const role of ['owner', 'admin', 'billing', 'member'] as const) {
      // Key events need an event to show they flow: the caller makes a key of their own (which every role hears).
      const trigger = field === 'keyEvents' ? async () => gw.services.organizations.createKey(await actorOf(fixture.members[role]), fixture.id, { label: role }) : undefined;
      const outcome = await subscriptionOutcome(field, fixture.id, fixture.members[role].token, trigger);
      actual[role] = field === 'usageRecorded' && outcome === 'silent' ? 'ok' : outcome;
      wanted[role] = SUBSCRIPTIONS[field]![role];
    }
    actual.outsider = await subscriptionOutcome(field, fixture.id, outsider.token);
    actual.anonymous = await subscriptionOutcome(field, fixture.id, undefined);
    expect(actual).toEqual({ ...wanted, outsider: 'NOT_FOUND', anonymous: 'UNAUTHENTICATED' });
  }, 60_000);

  it('a plain member hears only their own keys’ events; a manager hears every key’s', async () => {
    const fixture = await organizationWithRoles(gw, 'Narrowed');
    const heard = { member: [] as string[], admin: [] as string[] };
    const clients = (['member', 'admin'] as const).map((role) => {
      const client = createClient({ url: `${gw.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { sessionToken: fixture.members[role].token }, retryAttempts: 0, lazy: true });
      client.subscribe({ query: SUBSCRIPTION_DOCUMENTS.keyEvents!, variables: { organizationId: fixture.id } }, { next: (r) => heard[role].push((r.data as any).keyEvents.keyId), error: () => {}, complete: () => {} });
      return client;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const ownersKey = await gw.services.organizations.createKey(await actorOf(fixture.members.owner), fixture.id, { label: 'owner' });
      const membersKey = await gw.services.organizations.createKey(await actorOf(fixture.members.member), fixture.id, { label: 'member' });
      await expect.poll(() => heard.admin.length).toBe(2);
      await expect.poll(() => heard.member).toEqual([membersKey.id]);
      expect(heard.admin).toEqual([ownersKey.id, membersKey.id]);
    } finally {
      await Promise.all(clients.map((client) => client.dispose()));
    }
  });
});
