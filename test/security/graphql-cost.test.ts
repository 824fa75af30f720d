import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GRAPHQL_LIMITS } from '../../resolvers/limits.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * Issue 22, item 6: the cost bound counted a variable `limit` as 10, so `usage(limit: $n)` with n = 200 in
 * 88 aliases asked for 17,600 rows. Cost now uses the variable's value as sent (its declared default when
 * not sent), over HTTP and graphql-ws alike.
 */
const gw = useTestGateway();

const ALIASES = 88;
const usageAliases = (declaration: string) => `query Many(${declaration}) { ${Array.from({ length: ALIASES }, (_, i) => `u${i}: usage(limit: $n) { id model amountUsd status createdAt }`).join(' ')} }`;
// Each alias: a root field, then 5 fields per row.
const costOf = (n: number) => ALIASES * (GRAPHQL_LIMITS.rootFieldCost + 5 * n);

async function overHttp(query: string, variables: Record<string, unknown>, token: string) {
  const response = await http(gw.url, 'POST', '/graphql', { token, body: { query, variables } });
  return { status: response.status, errors: response.body.errors as { message: string; extensions?: { code?: string } }[] | undefined, text: response.text };
}

async function overWs(query: string, variables: Record<string, unknown>, token: string) {
  const client = createClient({ url: `${gw.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { sessionToken: token }, retryAttempts: 0, lazy: true });
  try {
    return await new Promise<{ errors?: readonly { message: string }[]; data?: unknown }>((resolve) => {
      let result: { errors?: readonly { message: string }[]; data?: unknown } = {};
      client.subscribe({ query, variables }, { next: (value) => (result = value as typeof result), error: (errors) => resolve({ errors: errors as { message: string }[] }), complete: () => resolve(result) });
    });
  } finally {
    await client.dispose();
  }
}

describe('GraphQL cost counts a variable limit at its value', () => {
  it('refuses usage(limit: $n) with n = 200 in 88 aliases, over HTTP (400) and graphql-ws, before anything runs', async () => {
    expect(costOf(200)).toBeGreaterThan(GRAPHQL_LIMITS.maxCost);
    const user = await newFundedAccount(gw);
    const refused = await overHttp(usageAliases('$n: Int'), { n: 200 }, user.token);
    expect(refused.status, refused.text.slice(0, 300)).toBe(400);
    expect(refused.errors![0]).toMatchObject({ message: expect.stringContaining('too costly'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect((await overWs(usageAliases('$n: Int'), { n: 200 }, user.token)).errors?.[0]?.message).toContain('too costly');
  });

  it('a declared default counts when the variable is not sent; a sent value overrides it', async () => {
    const user = await newFundedAccount(gw);
    expect((await overHttp(usageAliases('$n: Int = 200'), {}, user.token)).errors?.[0]?.message).toContain('too costly');
    const small = await overHttp(usageAliases('$n: Int = 200'), { n: 2 }, user.token);
    expect(small.errors, small.text.slice(0, 300)).toBeUndefined();
  });

  it('the same document with a small n runs, over both transports', async () => {
    expect(costOf(5)).toBeLessThanOrEqual(GRAPHQL_LIMITS.maxCost);
    const user = await newFundedAccount(gw);
    const ok = await overHttp(usageAliases('$n: Int'), { n: 5 }, user.token);
    expect(ok.errors, ok.text.slice(0, 300)).toBeUndefined();
    const viaWs = await overWs(usageAliases('$n: Int'), { n: 5 }, user.token);
    expect(viaWs.errors).toBeUndefined();
    expect(Object.keys(viaWs.data as object)).toHaveLength(ALIASES);
  });

  it('a limit that is not a whole number counts as the largest list (and is refused by its type anyway)', async () => {
    const user = await newFundedAccount(gw);
    const result = await overHttp(usageAliases('$n: Int'), { n: 'lots' }, user.token);
    expect(result.status).toBeGreaterThanOrEqual(400);
    expect(result.status).toBeLessThan(500);
  });
});
