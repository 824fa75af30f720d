import { TRPCClientError } from '@trpc/client';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphql, http, trpcClient } from '../helpers/clients.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * Issue 21 / SPEC.md 4.3: the `provider_family` filter of the usage list and timeseries accepts only
 * the catalog's families. Regression: `/usage?provider_family=nope` was a 200 with an empty list.
 * The check is in the analytics service, so REST, GraphQL and tRPC refuse the same values.
 */

const gw = useTestGateway();
let token: string;
const range = `from=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&to=${encodeURIComponent(new Date().toISOString())}`;
const ISSUE = { msg: 'Input should be one of: family_a, family_b, family_c, family_d', type: 'literal_error' };

beforeAll(async () => {
  token = (await newFundedAccount(gw)).token;
});

describe('provider_family accepts only catalog families', () => {
  it('REST /usage and /usage/timeseries: 422 at query.provider_family for an unknown family; catalog families still filter', async () => {
    const list = await http(gw.url, 'GET', '/usage?provider_family=nope', { token });
    expect(list.status).toBe(422);
    expect(list.body).toEqual({ detail: [{ loc: ['query', 'provider_family'], ...ISSUE }] });
    const series = await http(gw.url, 'GET', `/usage/timeseries?${range}&provider_family=nope`, { token });
    expect(series.status).toBe(422);
    expect(series.body).toEqual({ detail: [{ loc: ['query', 'provider_family'], ...ISSUE }] });

    expect((await http(gw.url, 'GET', '/usage?provider_family=family_b', { token })).status).toBe(200);
    expect((await http(gw.url, 'GET', `/usage/timeseries?${range}&provider_family=family_b`, { token })).status).toBe(200);
  });

  it('GraphQL usage and usageTimeseries refuse it with the same issue, at the argument GraphQL names providerFamily', async () => {
    const usage = parse('query { usage(providerFamily: "nope") { requestId } }') as TypedDocumentNode<unknown, Record<string, never>>;
    const refused = await graphql(gw.url, usage, {}, token);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['providerFamily'], ...ISSUE }] });
    const timeseries = parse(`query { usageTimeseries(from: "${new Date(Date.now() - 3_600_000).toISOString()}", to: "${new Date().toISOString()}", providerFamily: "nope") { bucket } }`) as TypedDocumentNode<unknown, Record<string, never>>;
    expect((await graphql(gw.url, timeseries, {}, token)).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['providerFamily'] }] });
    const accepted = parse('query { usage(providerFamily: "family_a") { requestId } }') as TypedDocumentNode<unknown, Record<string, never>>;
    expect((await graphql(gw.url, accepted, {}, token)).errors).toBeUndefined();
  });

  it('tRPC usage.list and usage.timeseries refuse it with the same issue, at its camelCase input field', async () => {
    const client = trpcClient(gw.url, token);
    const list = await client.usage.list.query({ providerFamily: 'nope' }).catch((e: unknown) => e);
    expect(list).toBeInstanceOf(TRPCClientError);
    expect((list as TRPCClientError<any>).data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', httpStatus: 422, issues: [{ loc: ['providerFamily'], ...ISSUE }] });
    const series = await client.usage.timeseries.query({ from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString(), providerFamily: 'nope' }).catch((e: unknown) => e);
    expect((series as TRPCClientError<any>).data).toMatchObject({ issues: [{ loc: ['providerFamily'] }] });
    expect(await client.usage.list.query({ providerFamily: 'family_c' })).toMatchObject({ items: [] });
  });
});
