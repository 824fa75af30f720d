import { describe, expect, it } from 'vitest';
import { TRPCClientError } from '@trpc/client';
import { useTestGateway } from '../helpers/gateway.js';
import { graphql, http, newAccountInput, registerRest, trpcClient } from '../helpers/clients.js';
import { seedLedger } from '../helpers/ledger.js';
import { AccountSummaryDocument, MeDocument, TransactionsDocument } from '../graphql/generated.js';

const gw = useTestGateway();

async function trpcError(promise: Promise<unknown>): Promise<TRPCClientError<any>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCClientError) return error;
    throw error;
  }
  throw new Error('expected a tRPC error');
}

describe('tRPC accounts procedures', () => {
  it('register, me, summary, transactions, logout', async () => {
    const input = newAccountInput();
    const signedIn = await trpcClient(gw.url).accounts.register.mutate(input);
    expect(signedIn.account).toMatchObject({ username: input.username, email: input.email, balanceUsd: '0', isAdmin: false, emailVerified: false });
    const client = trpcClient(gw.url, signedIn.sessionToken);
    expect(await client.accounts.me.query()).toEqual(signedIn.account);
    expect(await client.accounts.summary.query()).toEqual({ userId: signedIn.account.userId, email: input.email, balanceUsd: '0', activeKeys: 0, usageUsd: '0', topupUsd: '0' });
    expect(await client.accounts.transactions.query()).toEqual([]);
    expect(await client.accounts.logout.mutate()).toEqual({ ok: true });
    const after = await trpcError(client.accounts.me.query());
    expect(after.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
  });

  it('login by username; wrong credentials are UNAUTHORIZED', async () => {
    const { input, account } = await registerRest(gw.url);
    const signedIn = await trpcClient(gw.url).accounts.login.mutate({ login: input.username, password: input.password });
    expect(signedIn.account.userId).toBe(account.user_id);
    const wrong = await trpcError(trpcClient(gw.url).accounts.login.mutate({ login: input.username, password: 'not-it-at-all' }));
    expect(wrong.message).toBe('Wrong login or password');
    expect(wrong.data).toMatchObject({ code: 'UNAUTHORIZED', reason: 'invalid_credentials' });
  });

  it('validation failures are UNPROCESSABLE_CONTENT (422) with SPEC.md-shaped issues', async () => {
    const error = await trpcError(trpcClient(gw.url).accounts.register.mutate({ username: 'ok-name', email: 'x@example.test', password: 'short' }));
    expect(error.data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', httpStatus: 422, issues: [{ loc: ['password'], type: 'string_too_short' }] });
    const token = (await registerRest(gw.url)).token;
    const limit = await trpcError(trpcClient(gw.url, token).accounts.transactions.query({ limit: 0 }));
    expect(limit.data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', issues: [{ loc: ['limit'], type: 'greater_than_equal' }] });
  });
});

describe('one accounts service behind three transports', () => {
  it('returns the same account, summary and transactions through REST, GraphQL and tRPC', async () => {
    const { account, token } = await registerRest(gw.url);
    await seedLedger(gw.db, account.user_id, [
      { amountUsd: '20', kind: 'topup' },
      { amountUsd: '-0.0123456789', kind: 'usage', model: 'gen-5.6-sol', provider: 'family_a', promptTokens: 1000, completionTokens: 250 },
    ]);

    const rest = {
      me: (await http(gw.url, 'GET', '/auth/me', { token })).body,
      summary: (await http(gw.url, 'GET', '/auth/summary', { token })).body,
      transactions: (await http(gw.url, 'GET', '/auth/transactions', { token })).body,
    };
    const gql = {
      me: (await graphql(gw.url, MeDocument, {}, token)).data!.me,
      summary: (await graphql(gw.url, AccountSummaryDocument, {}, token)).data!.accountSummary,
      transactions: (await graphql(gw.url, TransactionsDocument, {}, token)).data!.transactions,
    };
    const client = trpcClient(gw.url, token);
    const trpc = {
      me: await client.accounts.me.query(),
      summary: await client.accounts.summary.query(),
      transactions: await client.accounts.transactions.query({}),
    };

    const restAsCamel = {
      me: { userId: rest.me.user_id, username: rest.me.username, email: rest.me.email, emailVerified: rest.me.email_verified, balanceUsd: rest.me.balance_usd, isAdmin: rest.me.is_admin },
      summary: { userId: rest.summary.user_id, email: rest.summary.email, balanceUsd: rest.summary.balance_usd, activeKeys: rest.summary.active_keys, usageUsd: rest.summary.usage_usd, topupUsd: rest.summary.topup_usd },
      transactions: rest.transactions.map((t: any) => ({
        id: t.id, userId: t.user_id, amountUsd: t.amount_usd, kind: t.kind, apiKeyId: t.api_key_id, provider: t.provider, model: t.model,
        promptTokens: t.prompt_tokens, completionTokens: t.completion_tokens, createdAt: t.created_at,
      })),
    };
    expect(restAsCamel.me).toEqual(gql.me);
    expect(restAsCamel.me).toEqual(trpc.me);
    expect(restAsCamel.summary).toEqual(gql.summary);
    expect(restAsCamel.summary).toEqual(trpc.summary);
    expect(restAsCamel.transactions).toEqual(gql.transactions);
    expect(restAsCamel.transactions).toEqual(trpc.transactions.map((t) => ({ ...t, createdAt: new Date(t.createdAt).toISOString() })));
    expect(restAsCamel.summary).toMatchObject({ balanceUsd: '19.9876543211', usageUsd: '0.0123456789', topupUsd: '20' });
    expect(restAsCamel.transactions).toHaveLength(2);
  });
});
