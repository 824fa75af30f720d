import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { useTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 22, items 1 and 5: a graphql-ws socket runs every operation as a session that is valid now
 * (a signed-out or expired session's sockets are closed, their subscriptions end, and no operation
 * runs on them), and sockets are bounded per account, per address, in anonymous waiting and in idling.
 * Spoken in the raw graphql-transport-ws protocol, so close codes and refusals are seen as sent.
 */

interface Closed {
  code: number;
  reason: string;
}

/** A graphql-transport-ws socket with its messages queued and its close awaited. */
class RawSocket {
  readonly messages: any[] = [];
  readonly closed: Promise<Closed>;
  private wake: (() => void) | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)));
      this.wake?.();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    void this.closed.then(() => this.wake?.());
  }

  /** Opens a socket; with `init`, sends connection_init and waits for connection_ack (or the close). */
  static async open(gw: TestGateway, init?: Record<string, unknown>): Promise<RawSocket> {
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const socket = new RawSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('close', () => resolve());
    });
    if (init && ws.readyState === ws.OPEN) {
      socket.send({ type: 'connection_init', payload: init });
      await socket.next((m) => m.type === 'connection_ack').catch(() => undefined);
    }
    return socket;
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  /** The first message (already received or coming) that matches; rejects when the socket closes first. */
  async next(match: (message: any) => boolean, timeoutMs = 5_000): Promise<any> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (this.ws.readyState === this.ws.CLOSED) throw new Error(`socket closed: ${JSON.stringify(await this.closed)}`);
      if (Date.now() > until) throw new Error(`no matching message in ${timeoutMs} ms; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  /** Runs one operation and resolves with its first `next` payload or its `error` payload. */
  async run(id: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
    this.send({ id, type: 'subscribe', payload: { query, variables } });
    const answer = await this.next((m) => m.id === id && (m.type === 'next' || m.type === 'error'));
    return answer.type === 'next' ? answer.payload : { errors: answer.payload };
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  close(): void {
    this.ws.close();
  }
}

async function closedWithin(socket: RawSocket, ms: number): Promise<Closed> {
  return Promise.race([socket.closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`socket still open after ${ms} ms`)), ms))]);
}

const activeKeys = async (gw: TestGateway, userId: string) =>
  ((await gw.db.query<{ n: number }>('select count(*)::int as n from api_keys where user_id = $1 and revoked_at is null', [userId])) as { n: number }[])[0]!.n;

describe('graphql-ws: every operation runs as a session valid now', () => {
  const gw = useTestGateway({ WS_SESSION_RECHECK_SECONDS: '0.3' });

  it('a logout closes the open socket at once (4401) and ends its running subscription', async () => {
    const user = await newFundedAccount(gw);
    const socket = await RawSocket.open(gw, { sessionToken: user.token });
    expect((await socket.run('me', '{ me { userId } }')).data).toEqual({ me: { userId: user.userId } });
    socket.send({ id: 'events', type: 'subscribe', payload: { query: 'subscription { sessionEvents { kind sessionId } }' } });
    // The subscription is live: a second sign-in of the same account is delivered on it.
    const other = await http(gw.url, 'POST', '/auth/login', { body: { login: user.input.username, password: user.input.password } });
    expect(other.status).toBe(200);
    await socket.next((m) => m.id === 'events' && m.type === 'next' && m.payload.data.sessionEvents.kind === 'SIGNED_IN');

    expect((await http(gw.url, 'POST', '/auth/logout', { token: user.token })).status).toBe(204);
    expect(await closedWithin(socket, 2_000)).toMatchObject({ code: 4401 });
  });

  it('a session revoked without any event (another process, the database) runs no operation: no key is minted', async () => {
    const user = await newFundedAccount(gw);
    const socket = await RawSocket.open(gw, { sessionToken: user.token });
    expect((await socket.run('me', '{ me { userId } }')).data).toEqual({ me: { userId: user.userId } });
    const keysBefore = await activeKeys(gw, user.userId);
    await gw.db.query('update sessions set revoked_at = now() where id = $1', [user.actor.sessionId]);

    const minted = await socket.run('mint', 'mutation { createKey(input: { label: "after logout" }) { id secret } }').catch((error: Error) => ({ closedFirst: error.message }));
    expect(JSON.stringify(minted)).not.toContain('"secret"');
    expect(await activeKeys(gw, user.userId)).toBe(keysBefore);
    expect(await closedWithin(socket, 2_000)).toMatchObject({ code: 4401 });
  });

  it('a session that expires while its socket is open (with a running subscription) is closed within the re-check time', async () => {
    const user = await newFundedAccount(gw);
    const socket = await RawSocket.open(gw, { sessionToken: user.token });
    socket.send({ id: 'tasks', type: 'subscribe', payload: { query: 'subscription { videoTaskUpdated { id status } }' } });
    expect((await socket.run('me', '{ me { userId } }')).data).toEqual({ me: { userId: user.userId } });
    await gw.db.query("update sessions set expires_at = now() - interval '1 second' where id = $1", [user.actor.sessionId]);
    expect(await closedWithin(socket, 3_000)).toMatchObject({ code: 4401 });
  });

  it('a socket whose session stays valid keeps working past several re-checks', async () => {
    const user = await newFundedAccount(gw);
    const socket = await RawSocket.open(gw, { sessionToken: user.token });
    socket.send({ id: 'events', type: 'subscribe', payload: { query: 'subscription { sessionEvents { kind } }' } });
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(socket.open).toBe(true);
    expect((await socket.run('me', '{ me { userId } }')).data).toEqual({ me: { userId: user.userId } });
    socket.close();
  });
});

describe('graphql-ws: bounded sockets', () => {
  const gw = useTestGateway({ WS_MAX_PER_ACCOUNT: '3', WS_MAX_PER_ADDRESS: '6', WS_ANONYMOUS_SUBSCRIBE_SECONDS: '0.5', WS_IDLE_SECONDS: '1' });

  it('caps sockets per account (4429); closing one makes room', async () => {
    const user = await newFundedAccount(gw);
    const sockets = await Promise.all([1, 2, 3].map(() => RawSocket.open(gw, { sessionToken: user.token })));
    for (const socket of sockets) socket.send({ id: 's', type: 'subscribe', payload: { query: 'subscription { sessionEvents { kind } }' } });
    expect(sockets.every((s) => s.open)).toBe(true);
    const fourth = await RawSocket.open(gw, { sessionToken: user.token });
    expect(await closedWithin(fourth, 2_000)).toMatchObject({ code: 4429 });

    sockets[0]!.close();
    await sockets[0]!.closed;
    const again = await RawSocket.open(gw, { sessionToken: user.token });
    expect((await again.run('me', '{ me { userId } }')).data).toEqual({ me: { userId: user.userId } });
    for (const socket of [...sockets, again]) socket.close();
    await Promise.all([...sockets, again].map((s) => s.closed));
  });

  it('caps sockets per client address (4429), signed in or not', async () => {
    const sockets = await Promise.all(Array.from({ length: 6 }, () => RawSocket.open(gw)));
    expect(sockets.every((s) => s.open)).toBe(true);
    const seventh = await RawSocket.open(gw);
    expect(await closedWithin(seventh, 2_000)).toMatchObject({ code: 4429 });
    for (const socket of sockets) socket.close();
    await Promise.all(sockets.map((s) => s.closed));
  });

  it('closes an anonymous socket that does not subscribe in time (4408); one holding a subscription stays', async () => {
    const idle = await RawSocket.open(gw, {});
    const listening = await RawSocket.open(gw, {});
    listening.send({ id: 'status', type: 'subscribe', payload: { query: 'subscription { serviceStatusChanged { status } }' } });
    // Queries alone do not keep an anonymous socket open.
    expect((await idle.run('q', '{ __typename }')).data).toEqual({ __typename: 'Query' });
    expect(await closedWithin(idle, 2_000)).toMatchObject({ code: 4408 });
    expect(listening.open).toBe(true);
    // Its subscription ends: it must subscribe again within the time, or it is closed too.
    listening.send({ id: 'status', type: 'complete' });
    expect(await closedWithin(listening, 2_000)).toMatchObject({ code: 4408 });
  });

  it('closes a signed-in socket with nothing running after the idle time (4408)', async () => {
    const user = await newFundedAccount(gw);
    const socket = await RawSocket.open(gw, { sessionToken: user.token });
    expect((await socket.run('me', '{ me { userId } }')).data).toEqual({ me: { userId: user.userId } });
    const started = Date.now();
    expect(await closedWithin(socket, 3_000)).toMatchObject({ code: 4408 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });
});
