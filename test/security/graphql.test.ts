import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from 'graphql';
import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GRAPHQL_LIMITS } from '../../resolvers/limits.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from '../helpers/config.js';
import { startTestGateway, useTestGateway } from '../helpers/gateway.js';
import { ROOT } from '../helpers/process.js';

/**
 * GraphQL abuse: documents built to amplify work are refused before they run (depth, cost, batches),
 * production hides the schema, and every field applies the same authorization as REST does.
 */
const gw = useTestGateway();

type GqlBody = { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };

async function gql(query: string, variables: Record<string, unknown> = {}, token?: string, url = gw.url) {
  const response = await http<GqlBody>(url, 'POST', '/graphql', { token, body: { query, variables } });
  return { status: response.status, ...response.body, text: response.text };
}

/** `__type { fields { type { ofType { ... { name } } } } }`: `depth` levels of fields, `name` the deepest. */
function nestedTypeQuery(depth: number): string {
  let inner = 'name';
  for (let level = 4; level < depth; level++) inner = `ofType { ${inner} }`;
  return `{ __type(name: "Query") { fields { type { ${inner} } } } }`;
}

/** `count` aliases of the unbounded `keys` list: each costs a root field plus its assumed size (one field per key). */
const PER_KEYS_ALIAS = GRAPHQL_LIMITS.rootFieldCost + GRAPHQL_LIMITS.assumedListSize;
const aliasedKeys = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `k${i}: keys { id }`).join(' ')} }`;

describe('depth and cost limits, before anything runs', () => {
  it(`refuses a document nested deeper than ${GRAPHQL_LIMITS.maxDepth} levels and runs one at the limit`, async () => {
    const atLimit = await gql(nestedTypeQuery(GRAPHQL_LIMITS.maxDepth));
    expect(atLimit.errors, atLimit.text).toBeUndefined();
    expect(atLimit.data.__type.fields.length).toBeGreaterThan(10);
    const tooDeep = await gql(nestedTypeQuery(GRAPHQL_LIMITS.maxDepth + 1));
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.errors![0]).toMatchObject({ message: expect.stringContaining('too deep'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(tooDeep.data).toBeUndefined();
  });

  it('lets the standard introspection query through outside production (GraphiQL and codegen use it)', async () => {
    const result = await gql(getIntrospectionQuery());
    expect(result.errors, result.text).toBeUndefined();
    expect(result.data.__schema.queryType.name).toBe('Query');
  });

  it('refuses alias amplification past the cost limit, and counts a literal limit instead of the assumed list size', async () => {
    const user = await newFundedAccount(gw);
    const fits = Math.floor(GRAPHQL_LIMITS.maxCost / PER_KEYS_ALIAS);
    const ok = await gql(aliasedKeys(fits), {}, user.token);
    expect(ok.errors, ok.text.slice(0, 300)).toBeUndefined();
    const tooCostly = await gql(aliasedKeys(fits + 1), {}, user.token);
    expect(tooCostly.status).toBe(400);
    expect(tooCostly.errors![0]).toMatchObject({ message: expect.stringContaining('too costly'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    // The same number of aliases over `invoices(limit: 1)` costs a root field and 1 each: inside the limit.
    const bounded = await gql(`{ ${Array.from({ length: fits + 1 }, (_, i) => `i${i}: invoices(limit: 1) { id }`).join(' ')} }`, {}, user.token);
    expect(bounded.errors?.[0]?.message ?? '').not.toContain('too costly');
  });

  it('refuses fragments that fan out past the limits the same way as inline selections', async () => {
    const user = await newFundedAccount(gw);
    const fragments = `fragment K on ApiKey { id label } fragment Q on Query { ${Array.from({ length: Math.ceil(GRAPHQL_LIMITS.maxCost / (GRAPHQL_LIMITS.rootFieldCost + 2 * GRAPHQL_LIMITS.assumedListSize)) + 1 }, (_, i) => `k${i}: keys { ...K }`).join(' ')} }`;
    const result = await gql(`query { ...Q a: __typename } ${fragments}`, {}, user.token);
    expect(result.status).toBe(400);
    expect(result.errors![0]!.message).toContain('too costly');
  });

  it('applies the same limits over graphql-ws', async () => {
    const user = await newFundedAccount(gw);
    const client = createClient({ url: `${gw.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { sessionToken: user.token }, retryAttempts: 0, lazy: true });
    try {
      const run = (query: string) =>
        new Promise<{ errors?: readonly { message: string }[]; data?: unknown }>((resolve) => {
          let result: { errors?: readonly { message: string }[]; data?: unknown } = {};
          client.subscribe({ query }, { next: (value) => (result = value as typeof result), error: (errors) => resolve({ errors: errors as { message: string }[] }), complete: () => resolve(result) });
        });
      expect((await run(nestedTypeQuery(GRAPHQL_LIMITS.maxDepth + 1))).errors?.[0]?.message).toContain('too deep');
      expect((await run(aliasedKeys(Math.floor(GRAPHQL_LIMITS.maxCost / PER_KEYS_ALIAS) + 1))).errors?.[0]?.message).toContain('too costly');
      const ordinary = await run('{ me { userId } }');
      expect(ordinary.data, JSON.stringify(ordinary)).toMatchObject({ me: { userId: user.userId } });
    } finally {
      await client.dispose();
    }
  });

  it('runs one operation per HTTP request: a batch is refused and none of it runs', async () => {
    const user = await newFundedAccount(gw);
    const create = { query: 'mutation { createKey(input: { label: "batched" }) { id } }' };
    const response = await http(gw.url, 'POST', '/graphql', { token: user.token, body: [create, create, create] });
    expect(response.status).toBe(400);
    expect(response.text).toContain('batching');
    const [row] = await gw.db.query<{ n: number }>('select count(*)::int as n from api_keys where user_id = $1', [user.userId]);
    expect(row!.n).toBe(0);
  });

  it('refuses mutations over GET and simple cross-site POSTs (CSRF): nothing runs', async () => {
    const user = await newFundedAccount(gw);
    const query = encodeURIComponent('mutation { createKey(input: { label: "csrf" }) { id } }');
    const viaGet = await http(gw.url, 'GET', `/graphql?query=${query}`, { token: user.token });
    expect(viaGet.status).toBeGreaterThanOrEqual(400);
    expect(viaGet.status).toBeLessThan(500);
    // A form or no-cors fetch can send text/plain with the browser's cookies: Apollo's CSRF prevention refuses it.
    const simple = await http(gw.url, 'POST', '/graphql', { rawBody: JSON.stringify({ query: 'mutation { createKey(input: { label: "csrf" }) { id } }' }), headers: { 'content-type': 'text/plain', cookie: `baikal_session=${user.token}` } });
    expect(simple.status).toBe(400);
    const [row] = await gw.db.query<{ n: number }>('select count(*)::int as n from api_keys where user_id = $1', [user.userId]);
    expect(row!.n).toBe(0);
  });
});

describe('production mode', () => {
  it('refuses introspection over HTTP and graphql-ws, and still serves ordinary queries', async () => {
    // Production needs a configured upstream; this one is never called here.
    const configFile = operatorConfigFile({ upstreams: [{ id: 'unused', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', credentialEnv: 'UNUSED_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }] }] });
    const production = await startTestGateway({ NODE_ENV: 'production', BAIKAL_CONFIG: configFile, UNUSED_UPSTREAM_KEY: 'unused', STATUS_PROBE_SECONDS: '0' });
    try {
      for (const query of ['{ __schema { types { name } } }', '{ __type(name: "Query") { name } }', getIntrospectionQuery()]) {
        const result = await gql(query, {}, undefined, production.url);
        expect(result.status).toBe(400);
        expect(result.errors![0]!.extensions!.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(result.text).toContain('introspection');
      }
      const client = createClient({ url: `${production.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
      try {
        const errors = await new Promise<readonly { message: string }[] | undefined>((resolve) => {
          client.subscribe({ query: '{ __schema { types { name } } }' }, { next: () => resolve(undefined), error: (e) => resolve(e as { message: string }[]), complete: () => resolve(undefined) });
        });
        expect(errors?.[0]?.message).toContain('introspection');
      } finally {
        await client.dispose();
      }
      const ordinary = await gql('{ serviceStatus { __typename } }', {}, undefined, production.url);
      expect(ordinary.errors, ordinary.text).toBeUndefined();
      // No explorer either: a browser opening /graphql gets the API's answer, not GraphiQL.
      const page = await fetch(`${production.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(await page.text()).not.toContain('id="graphiql"');
    } finally {
      await production.close();
      removeOperatorConfigFile(configFile);
    }
  });
});

/**
 * Every query and mutation of the printed schema, called with made-up but well-typed arguments:
 * without a session each answers UNAUTHENTICATED unless it is public by SPEC.md, each admin field
 * answers FORBIDDEN to a signed-in non-admin, and none answers INTERNAL_SERVER_ERROR.
 */
describe('the same authorization on every field', () => {
  const schema = buildSchema(readFileSync(path.join(ROOT, 'schema/schema.graphql'), 'utf8'));
  /** Public by SPEC.md: signing up and in, the catalog, status, leaderboard, payment settings and announcements. */
  const PUBLIC = new Set(['register', 'login', 'catalogModels', 'serviceStatus', 'leaderboard', 'paymentConfig', 'announcements', 'messengerLinkStatus', 'resendVerification', 'logout',
    // The list of webhook event types and what each carries: documentation, the same for everyone.
    'webhookEventTypes',
    // What an organization's invitation link offers: the link is the secret (test/security/organizations.test.ts).
    'invitationPreview']);
  /** Refused to an account whose e-mail is not verified yet (FORBIDDEN, email_not_verified), whatever the input. */
  const VERIFIED_EMAIL = new Set(['createOrganization']);
  const ADMIN = new Set([
    'adjustBalance', 'createAnnouncement', 'updateAnnouncement', 'publishAnnouncement', 'unpublishAnnouncement', 'adminAnnouncements', 'markInvoicePaid',
    'removeCatalogModel', 'upsertCatalogModel', 'setModelPrices', 'upsertPricingPlan', 'setKeyLimits', 'setAccountLimits', 'setTrustedPartner', 'revokeTrustedPartner',
    'adminPricingPlans', 'adminAccounts', 'adminAccountKeys', 'adminInvoices', 'endSessions',
    'adminUpstreams', 'adminUpstream', 'createUpstream', 'updateUpstream', 'setUpstreamEnabled', 'deleteUpstream',
    'addUpstreamCredential', 'updateUpstreamCredential', 'deleteUpstreamCredential', 'setUpstreamRoutes', 'setUpstreamPrices',
    'adminUpstreamHealth', 'testUpstreamCredential', 'adminMargin', 'adminUpstreamUsage',
  ]);
  const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

  function sample(type: GraphQLInputType): unknown {
    if (isNonNullType(type)) return sample(type.ofType);
    if (isListType(type)) return [sample(type.ofType)];
    if (isEnumType(type)) return type.getValues()[0]!.value;
    if (isInputObjectType(type)) {
      return Object.fromEntries(Object.values(type.getFields()).filter((f) => isNonNullType(f.type)).map((f) => [f.name, sample(f.type)]));
    }
    if (isScalarType(type)) {
      switch (type.name) {
        case 'ID':
          return UNKNOWN_ID;
        case 'Int':
        case 'Float':
          return 1;
        case 'Boolean':
          return false;
        case 'DateTimeISO':
          return new Date().toISOString();
        case 'JSONObject':
          return {};
        default:
          return 'x';
      }
    }
    throw new Error(`no sample for ${String(type)}`);
  }

  function operationOf(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>) {
    const required = field.args.filter((a) => isNonNullType(a.type));
    const declared = required.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
    const passed = required.map((a) => `${a.name}: $${a.name}`).join(', ');
    const selection = isScalarType(getNamedType(field.type)) ? '' : ' { __typename }';
    return {
      query: `${kind} Probe${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selection} }`,
      variables: Object.fromEntries(required.map((a) => [a.name, sample(a.type)])),
    };
  }

  const fields = (['query', 'mutation'] as const).flatMap((kind) => {
    const root = (kind === 'query' ? schema.getQueryType() : schema.getMutationType()) as GraphQLObjectType;
    return Object.values(root.getFields()).map((field) => ({ kind, field }));
  });

  it('covers the whole schema (a new field needs a decision here)', () => {
    expect(fields.length).toBeGreaterThan(45);
    for (const name of [...PUBLIC, ...ADMIN]) expect(fields.some((f) => f.field.name === name), name).toBe(true);
  });

  it('without a session: UNAUTHENTICATED on every non-public field; no field fails internally', async () => {
    const outcomes: Record<string, string> = {};
    for (const { kind, field } of fields) {
      const { query, variables } = operationOf(kind, field);
      const result = await gql(query, variables);
      outcomes[field.name] = result.errors?.[0]?.extensions?.code ?? 'ok';
    }
    const refused = Object.entries(outcomes).filter(([, code]) => code === 'UNAUTHENTICATED').map(([name]) => name);
    const answered = Object.keys(outcomes).filter((name) => !refused.includes(name));
    expect(answered.filter((name) => !PUBLIC.has(name)), JSON.stringify(outcomes)).toEqual([]);
    expect(Object.values(outcomes)).not.toContain('INTERNAL_SERVER_ERROR');
  });

  it('signed in without admin rights: FORBIDDEN on every admin field, and nothing they guard changes', async () => {
    const user = await newFundedAccount(gw, '1');
    const outcomes: Record<string, string> = {};
    for (const { kind, field } of fields) {
      if (field.name === 'logout') continue; // would end the session the other calls use
      const { query, variables } = operationOf(kind, field);
      const result = await gql(query, variables, user.token);
      outcomes[field.name] = result.errors?.[0]?.extensions?.code ?? 'ok';
    }
    for (const name of ADMIN) expect(outcomes[name], name).toBe('FORBIDDEN');
    for (const name of VERIFIED_EMAIL) expect(outcomes[name], name).toBe('FORBIDDEN');
    expect(Object.entries(outcomes).filter(([name, code]) => code === 'FORBIDDEN' && !ADMIN.has(name) && !VERIFIED_EMAIL.has(name))).toEqual([]);
    expect(Object.values(outcomes)).not.toContain('INTERNAL_SERVER_ERROR');
    const [row] = await gw.db.query<{ balance: string }>('select (balance_paid_usd + balance_bonus_usd)::text as balance from users where id = $1', [user.userId]);
    expect(Number(row!.balance)).toBe(1);
  });

  it("someone else's key, invoice, usage event and video task are NOT_FOUND over GraphQL as over REST", async () => {
    const owner = await newFundedAccount(gw);
    const other = await newFundedAccount(gw);
    const key = await http(gw.url, 'POST', '/keys', { token: owner.token, body: { label: 'mine' } });
    expect(key.status).toBe(201);
    const viaGraphql = await gql('mutation($id: ID!) { revokeKey(id: $id) }', { id: key.body.id }, other.token);
    expect(viaGraphql.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    const viaRest = await http(gw.url, 'DELETE', `/keys/${key.body.id}`, { token: other.token });
    expect(viaRest.status).toBe(404);
    const listed = await http(gw.url, 'GET', '/keys', { token: owner.token });
    expect(listed.body.map((k: { id: string }) => k.id)).toContain(key.body.id);
    const admin = await newAdmin(gw);
    expect((await gql('{ keys { id } }', {}, admin.token)).data.keys).toEqual([]);
  });
});
