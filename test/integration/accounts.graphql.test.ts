import { describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import { print } from 'graphql';
import WebSocket from 'ws';
import { useTestGateway } from '../helpers/gateway.js';
import { graphql, http, newAccountInput, registerRest } from '../helpers/clients.js';
import { seedLedger } from '../helpers/ledger.js';
import {
  AccountSummaryDocument,
  LoginDocument,
  LogoutDocument,
  MeDocument,
  RegisterDocument,
  SessionEventsDocument,
  TransactionsDocument,
  type SessionEventsSubscription,
} from '../graphql/generated.js';

const gw = useTestGateway();

describe('GraphQL over HTTP', () => {
  it('register, me, accountSummary, transactions, logout', async () => {
    const input = newAccountInput();
    const registered = await graphql(gw.url, RegisterDocument, { input });
    expect(registered.errors).toBeUndefined();
    const { sessionToken, account } = registered.data!.register;
    expect(sessionToken).toMatch(/^bks_/);
    expect(account).toMatchObject({ username: input.username, email: input.email, emailVerified: false, balanceUsd: '0', isAdmin: false });
    expect(registered.setCookie).toContain('baikal_session=');

    const me = await graphql(gw.url, MeDocument, {}, sessionToken);
    expect(me.data!.me).toEqual(account);

    await seedLedger(gw.db, account.userId, [{ amountUsd: '5.25', kind: 'topup' }, { amountUsd: '-0.25', kind: 'usage', model: 'delta-4.6', promptTokens: 7 }]);
    const summary = await graphql(gw.url, AccountSummaryDocument, {}, sessionToken);
    expect(summary.data!.accountSummary).toEqual({ userId: account.userId, email: input.email, balanceUsd: '5', activeKeys: 0, usageUsd: '0.25', topupUsd: '5.25' });

    const transactions = await graphql(gw.url, TransactionsDocument, { limit: 1 }, sessionToken);
    expect(transactions.data!.transactions).toHaveLength(1);
    expect(transactions.data!.transactions[0]).toMatchObject({ amountUsd: '-0.25', kind: 'usage', model: 'delta-4.6', promptTokens: 7, completionTokens: null });

    const logout = await graphql(gw.url, LogoutDocument, {}, sessionToken);
    expect(logout.data!.logout).toBe(true);
    const after = await graphql(gw.url, MeDocument, {}, sessionToken);
    expect(after.errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
  });

  it('login by e-mail; a wrong password is UNAUTHENTICATED with the same message as an unknown login', async () => {
    const { input, account } = await registerRest(gw.url);
    const ok = await graphql(gw.url, LoginDocument, { input: { login: input.email, password: input.password } });
    expect(ok.data!.login.account.userId).toBe(account.user_id);
    const wrong = await graphql(gw.url, LoginDocument, { input: { login: input.email, password: 'wrong-one' } });
    const unknown = await graphql(gw.url, LoginDocument, { input: { login: 'ghost@example.test', password: 'wrong-one' } });
    expect(wrong.data).toBeNull();
    expect(wrong.errors![0]).toMatchObject({ message: 'Wrong login or password', extensions: { code: 'UNAUTHENTICATED', reason: 'invalid_credentials' } });
    expect(unknown.errors![0]!.message).toBe(wrong.errors![0]!.message);
  });

  it('reports validation failures as BAD_USER_INPUT with SPEC.md-shaped issues', async () => {
    const result = await graphql(gw.url, RegisterDocument, { input: { username: 'x', email: 'nope', password: 'short' } });
    const error = result.errors![0]!;
    expect(error.extensions!.code).toBe('BAD_USER_INPUT');
    expect(error.extensions!.issues.map((i: any) => i.loc[0]).sort()).toEqual(['email', 'password', 'username']);
    const limit = await graphql(gw.url, TransactionsDocument, { limit: 500 }, (await registerRest(gw.url)).token);
    expect(limit.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['limit'], type: 'less_than_equal' }] });
  });

  it('masks nothing useful away from clients but never leaks internals; malformed queries are client errors', async () => {
    const parse = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { ' }) });
    expect(parse.status).toBe(400);
    expect(((await parse.json()) as any).errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    const unknownField = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { password } }' }) });
    expect(((await unknownField.json()) as any).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses a cross-site form post (CSRF prevention)', async () => {
    const response = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: 'mutation { logout }' }) });
    expect(response.status).toBe(400);
  });
});

describe('GraphQL subscriptions over graphql-ws', () => {
  function wsClient(connectionParams?: Record<string, unknown>): Client {
    return createClient({ url: gw.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
  }

  function nextEvents(client: Client, count: number): { events: Promise<SessionEventsSubscription[]>; ready: Promise<void> } {
    const received: SessionEventsSubscription[] = [];
    let readyResolve!: () => void;
    const ready = new Promise<void>((resolve) => (readyResolve = resolve));
    const events = new Promise<SessionEventsSubscription[]>((resolve, reject) => {
      const iterator = client.iterate<SessionEventsSubscription>({ query: print(SessionEventsDocument) });
      (async () => {
        const first = iterator.next();
        // The subscription is registered once the server acknowledged the connection and the operation.
        setTimeout(readyResolve, 150);
        let step = await first;
        while (!step.done) {
          if (step.value.errors) return reject(new Error(JSON.stringify(step.value.errors)));
          received.push(step.value.data!);
          if (received.length === count) {
            await iterator.return?.();
            return resolve(received);
          }
          step = await iterator.next();
        }
        resolve(received);
      })().catch(reject);
    });
    return { events, ready };
  }

  it('delivers sign-in and sign-out events of the subscriber’s own account only', async () => {
    const me = await registerRest(gw.url);
    const stranger = await registerRest(gw.url);
    const client = wsClient({ sessionToken: me.token });
    try {
      const { events, ready } = nextEvents(client, 2);
      await ready;
      // Someone else's sign-in must not be delivered; ours must, then our sign-out.
      await http(gw.url, 'POST', '/auth/login', { body: { login: stranger.input.username, password: stranger.input.password } });
      const login = await http(gw.url, 'POST', '/auth/login', { body: { login: me.input.username, password: me.input.password } });
      const secondToken = login.headers.get('x-session-token')!;
      await http(gw.url, 'POST', '/auth/logout', { token: secondToken });
      const received = await events;
      expect(received.map((e) => e.sessionEvents.kind)).toEqual(['SIGNED_IN', 'SIGNED_OUT']);
      expect(received[0]!.sessionEvents.sessionId).toBe(received[1]!.sessionEvents.sessionId);
      const sessions = await gw.db.query('select id from sessions where user_id = $1', [me.account.user_id]);
      expect(sessions.map((s) => s.id)).toContain(received[0]!.sessionEvents.sessionId);
    } finally {
      await client.dispose();
    }
  });

  it('refuses an anonymous subscription with UNAUTHENTICATED and a bad token at connection time', async () => {
    const anonymous = wsClient();
    try {
      const iterator = anonymous.iterate({ query: print(SessionEventsDocument) });
      const outcome = await iterator.next().then(
        (step) => JSON.stringify(step.value),
        (error: unknown) => JSON.stringify(error),
      );
      expect(outcome).toContain('UNAUTHENTICATED');
    } finally {
      await anonymous.dispose();
    }

    const forged = wsClient({ sessionToken: 'bks_forged-token-value' });
    try {
      const iterator = forged.iterate({ query: print(SessionEventsDocument) });
      await expect(iterator.next()).rejects.toMatchObject({ code: 4403 });
    } finally {
      await forged.dispose();
    }
  });
});
