import { registerRest, http } from './clients.js';
import type { TestGateway } from './gateway.js';
import type { InferenceStack } from './inference.js';

/** A signed-in account whose e-mail is verified (as the payments and alerts helpers do it: in the database). */
export async function verifiedAccount(gw: Pick<TestGateway, 'url' | 'db'>) {
  const registered = await registerRest(gw.url);
  await gw.db.query('update users set email_verified = true where id = $1', [registered.account.user_id]);
  return { token: registered.token, userId: registered.account.user_id as string, email: registered.input.email };
}

export type Account = Awaited<ReturnType<typeof verifiedAccount>>;
export const ROLE_NAMES = ['owner', 'admin', 'billing', 'member'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/**
 * An organization with one account in each role, made through REST (the owner founds it); the other members are
 * written straight into organization_members: how one joins is the flows test's subject, not the fixture's.
 */
export async function organizationWithRoles(gw: Pick<TestGateway, 'url' | 'db'>, name = 'Team') {
  const owner = await verifiedAccount(gw);
  const created = await http(gw.url, 'POST', '/orgs', { token: owner.token, body: { name } });
  if (created.status !== 201) throw new Error(`create organization: ${created.status} ${created.text}`);
  const id = created.body.id as string;
  const members = { owner } as Record<RoleName, Account>;
  for (const role of ['admin', 'billing', 'member'] as const) {
    members[role] = await verifiedAccount(gw);
    await gw.db.query('insert into organization_members (organization_id, user_id, role) values ($1, $2, $3)', [id, members[role].userId, role]);
  }
  return { id, members };
}

/** The newest invitation link mailed to `email` by the development transport (email_outbox), and its token. */
export async function outboxInvitation(gw: Pick<TestGateway, 'db'>, email: string): Promise<{ link: string; token: string }> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const [row] = await gw.db.query<{ text_body: string }>('select text_body from email_outbox where to_address = $1 order by created_at desc limit 1', [email]);
    const link = row && /(\S+\/app\/invite\?token=(\S+))/.exec(row.text_body);
    if (link) return { link: link[1]!, token: decodeURIComponent(link[2]!) };
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  throw new Error(`no invitation mailed to ${email}`);
}

/**
 * Organizations for tests that need a team quickly (money, faults): made through GraphQL as a cabinet user would,
 * except that members join by a row of their own (the invitation flow has tests of its own in
 * test/integration/organizations*.test.ts and the browser suite).
 */
type Stack = Pick<InferenceStack, 'url' | 'db'>;

/** A raw GraphQL call as the given session; throws on errors. */
export async function gql<T = Record<string, any>>(stack: Pick<InferenceStack, 'url'>, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(`${stack.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const json = (await response.json()) as { data?: T; errors?: { message: string }[] };
  if (json.errors?.length) throw new Error(`GraphQL: ${json.errors.map((e) => e.message).join('; ')}`);
  return json.data!;
}

export interface TestMember {
  userId: string;
  token: string;
  /** One organization key the member made. */
  key: string;
  keyId: string;
}

export interface TestOrganization {
  id: string;
  owner: TestMember;
  members: TestMember[];
}

export async function createOrgKey(stack: Pick<InferenceStack, 'url'>, token: string, organizationId: string, input: Record<string, unknown> = {}): Promise<{ key: string; keyId: string }> {
  const data = await gql<{ createOrganizationKey: { id: string; key: string } }>(
    stack,
    token,
    'mutation($organizationId: ID!, $input: CreateKeyInput!) { createOrganizationKey(organizationId: $organizationId, input: $input) { id key } }',
    { organizationId, input },
  );
  return { key: data.createOrganizationKey.key, keyId: data.createOrganizationKey.id };
}

/** An organization of an owner and `members` more (role member unless said), each with one organization key. */
export async function testOrganization(stack: Stack, members: number, role = 'member'): Promise<TestOrganization> {
  const owner = await verifiedAccount(stack);
  const created = await gql<{ createOrganization: { id: string } }>(stack, owner.token, 'mutation($input: CreateOrganizationInput!) { createOrganization(input: $input) { id } }', {
    input: { name: `Team ${owner.userId.slice(0, 6)}` },
  });
  const id = created.createOrganization.id;
  const joined = await Promise.all(
    Array.from({ length: members }, async () => {
      const account = await verifiedAccount(stack);
      await stack.db.query('insert into organization_members (organization_id, user_id, role) values ($1, $2, $3)', [id, account.userId, role]);
      return account;
    }),
  );
  const withKeys = await Promise.all([owner, ...joined].map(async (account) => ({ ...account, ...(await createOrgKey(stack, account.token, id)) })));
  return { id, owner: withKeys[0]!, members: withKeys.slice(1) };
}

export async function setMemberCap(stack: Pick<InferenceStack, 'url'>, token: string, organizationId: string, userId: string, monthlySpendCap: string | null): Promise<void> {
  await gql(stack, token, 'mutation($input: UpdateMemberInput!) { updateMember(input: $input) { userId } }', { input: { organizationId, userId, monthlySpendCap } });
}

export async function removeMember(stack: Pick<InferenceStack, 'url'>, token: string, organizationId: string, userId: string): Promise<void> {
  await gql(stack, token, 'mutation($organizationId: ID!, $userId: ID!) { removeMember(organizationId: $organizationId, userId: $userId) }', { organizationId, userId });
}

export async function setOrganizationCap(stack: Pick<InferenceStack, 'url'>, token: string, organizationId: string, monthlySpendCap: string | null): Promise<void> {
  await gql(stack, token, 'mutation($input: UpdateOrganizationInput!) { updateOrganization(input: $input) { id } }', { input: { organizationId, monthlySpendCap } });
}
