import type { InferenceStack } from './inference.js';
import { registerRest } from './clients.js';

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

/** A verified account (its e-mail marked verified as the verification code would). */
export async function verifiedAccount(stack: Stack): Promise<{ userId: string; token: string }> {
  const registered = await registerRest(stack.url);
  const userId = registered.account.user_id as string;
  await stack.db.query('update users set email_verified = true where id = $1', [userId]);
  return { userId, token: registered.token };
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
