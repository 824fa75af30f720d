import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/shared/cancellation.js';
import { UpstreamClient } from '../../src/upstreams/client.js';
import { resolveUpstreams, upstreamsSchema, type Upstream } from '../../src/upstreams/config.js';
import { UpstreamFailure } from '../../src/upstreams/failures.js';

/**
 * An upstream that closes idle connections without announcing when (no `Keep-Alive: timeout` in its
 * answers, as uvicorn under vLLM does, or node when a handler sets its own `Connection` header). Its close
 * is modelled at the moment the race is lost: a connection idle for `idleMs` is closing, and a request
 * that reaches it then is dropped unanswered, as a request does whose bytes cross the server's FIN.
 */
interface IdleClosingUpstream {
  url: string;
  connections: number;
  answered: number;
  dropped: number;
  close(): Promise<void>;
}

const ANSWER = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', choices: [] });

async function idleClosingUpstream(idleMs: number): Promise<IdleClosingUpstream> {
  const sockets = new Set<Socket>();
  const counts = { connections: 0, answered: 0, dropped: 0 };
  const server: Server = createServer((socket) => {
    counts.connections++;
    sockets.add(socket);
    let pending = Buffer.alloc(0);
    let closing = false;
    let idle: NodeJS.Timeout | undefined;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      clearTimeout(idle);
    });
    socket.on('data', (chunk: Buffer) => {
      if (closing) {
        counts.dropped++;
        return void socket.destroy();
      }
      clearTimeout(idle);
      pending = Buffer.concat([pending, chunk]);
      // One request at a time: its head, then as many body bytes as its content-length says.
      for (;;) {
        const headEnd = pending.indexOf('\r\n\r\n');
        if (headEnd === -1) return;
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(pending.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
        if (pending.length < headEnd + 4 + length) return;
        pending = pending.subarray(headEnd + 4 + length);
        counts.answered++;
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(ANSWER)}\r\nconnection: keep-alive\r\n\r\n${ANSWER}`);
        idle = setTimeout(() => (closing = true), idleMs);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(counts, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}

function upstreamAt(url: string, keepAliveMs?: number): Upstream {
  const [upstream] = resolveUpstreams(upstreamsSchema.parse([
    {
      id: 'idle-closing',
      kind: 'openai-compatible',
      baseUrl: url,
      credentialEnv: 'UNUSED_KEY',
      ...(keepAliveMs === undefined ? {} : { timeouts: { keepAliveMs } }),
      routes: [{ group: 'cheap', models: ['m'] }],
    },
  ]), { UNUSED_KEY: 'unused' });
  return upstream!;
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((thing) => thing.close()));
});

async function setUp(idleMs: number, keepAliveMs?: number) {
  const server = await idleClosingUpstream(idleMs);
  const client = new UpstreamClient();
  opened.push(server, client);
  const upstream = upstreamAt(server.url, keepAliveMs);
  const call = async () => {
    const answer = await client.post(upstream, '/chat/completions', JSON.stringify({ model: 'm', messages: [] }), {}, new Cancellation());
    return { status: answer.status, text: await answer.body.text() };
  };
  return { server, call };
}

describe('connections kept alive to an upstream that closes idle ones unannounced', () => {
  it('by default an idle connection is let go before the 5 s at which such servers close it', () => {
    const { timeouts } = upstreamAt('http://upstream.example/v1');
    // undici's keep-alive timer may fire up to ~0.5 s late (its coarse timers), and must still beat 5 s.
    expect(timeouts.keepAliveMs).toBeLessThanOrEqual(4_000);
  });

  it('a connection idle past keepAliveMs is not reused: the next request opens a new one and is answered', async () => {
    const { server, call } = await setUp(500, 200);
    expect(await call()).toEqual({ status: 200, text: ANSWER });
    await sleep(800);
    expect(await call()).toEqual({ status: 200, text: ANSWER });
    expect({ connections: server.connections, answered: server.answered, dropped: server.dropped }).toEqual({ connections: 2, answered: 2, dropped: 0 });
  });

  it('within keepAliveMs the connection is reused', async () => {
    const { server, call } = await setUp(5_000, 2_000);
    for (let i = 0; i < 3; i++) {
      expect(await call()).toEqual({ status: 200, text: ANSWER });
      await sleep(100);
    }
    expect({ connections: server.connections, answered: server.answered }).toEqual({ connections: 1, answered: 3 });
  });

  it('kept past the upstream idle close, the next request meets the closing connection and fails (why the default is short)', async () => {
    const { server, call } = await setUp(300, 30_000);
    expect(await call()).toEqual({ status: 200, text: ANSWER });
    await sleep(600);
    const failure = await call().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure).toMatchObject({ kind: 'connection' });
    expect({ connections: server.connections, dropped: server.dropped }).toEqual({ connections: 1, dropped: 1 });
  });
});

describe('an upstream edited live', () => {
  it('a new base URL (or timeouts) under the same id is called at once; the old pool lets its requests finish, then closes', async () => {
    const before = await idleClosingUpstream(5_000);
    const after = await idleClosingUpstream(5_000);
    const client = new UpstreamClient();
    opened.push(before, after, client);
    const call = async (upstream: Upstream) => (await client.post(upstream, '/chat/completions', '{}', {}, new Cancellation())).body.text();
    const first = upstreamAt(before.url);
    expect(await call(first)).toBe(ANSWER);
    expect(await call(first)).toBe(ANSWER);
    const edited = { ...upstreamAt(after.url), id: first.id };
    expect(await call(edited)).toBe(ANSWER);
    expect({ before: before.answered, after: after.answered }).toEqual({ before: 2, after: 1 });
    // An older version of the upstream still in a request's hands is served by a new pool, never the old base URL's settings crossed.
    expect(await call(first)).toBe(ANSWER);
    expect({ before: before.answered, after: after.answered }).toEqual({ before: 3, after: 1 });
  });
});
