import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder in front of a real service (PostgreSQL, Redis), so a test can make that service
 * unreachable for a process and bring it back, without touching the service itself (other tests and
 * workers share it).
 *
 * - `cut('reset')`: every open connection is destroyed, and new ones are accepted and reset at once,
 *   as when the service is down (clients see ECONNRESET and retry).
 * - `cut('blackhole')`: open connections are destroyed; new ones are accepted and then left silent,
 *   as behind a dead network link (clients wait for their own timeouts). On `restore()` the waiting
 *   ones are forwarded after all, as when the link comes back.
 * - `restore()`: new connections are forwarded again.
 */
export interface TcpForwarder {
  /** The local port clients connect to. */
  port: number;
  /** `host:port` of the forwarder, to put into a URL in place of the real service's. */
  address: string;
  /** The service's URL with its host and port replaced by the forwarder's. */
  urlFor(serviceUrl: string): string;
  cut(mode?: 'reset' | 'blackhole'): void;
  restore(): void;
  readonly isCut: boolean;
  /** Connections accepted so far (forwarded or not). */
  readonly accepted: number;
  close(): Promise<void>;
}

/**
 * `options.listen`: the address to listen on (default 127.0.0.1), e.g. the root side of a test's network
 * namespaces (test/helpers/hosts.ts), so processes in them reach a service that listens on loopback only.
 */
export async function startTcpForwarder(target: { host?: string; port: number }, options: { cut?: 'reset' | 'blackhole'; listen?: string } = {}): Promise<TcpForwarder> {
  const host = target.host ?? '127.0.0.1';
  const listen = options.listen ?? '127.0.0.1';
  let mode: 'open' | 'reset' | 'blackhole' = options.cut ?? 'open';
  let accepted = 0;
  const live = new Set<Socket>();
  const waiting = new Set<Socket>();

  const forward = (client: Socket) => {
    // No Nagle on either leg: a small write (a Redis reply) must not wait for the ACK of the one before it.
    const upstream = connect({ port: target.port, host, noDelay: true });
    client.setNoDelay(true);
    live.add(client);
    live.add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      live.delete(client);
      live.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
  };

  const server: Server = createServer((client) => {
    accepted += 1;
    if (mode === 'reset') return void client.resetAndDestroy();
    if (mode === 'blackhole') {
      // Paused: whatever the client sends stays buffered until the link comes back.
      client.pause();
      waiting.add(client);
      client.on('error', () => waiting.delete(client));
      client.on('close', () => waiting.delete(client));
      return;
    }
    forward(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, listen, resolve));
  const port = (server.address() as { port: number }).port;

  return {
    port,
    address: `${listen}:${port}`,
    urlFor(serviceUrl) {
      const url = new URL(serviceUrl);
      url.hostname = listen;
      url.port = String(port);
      return url.toString();
    },
    cut(newMode = 'reset') {
      mode = newMode;
      for (const socket of live) socket.destroy();
      live.clear();
    },
    restore() {
      mode = 'open';
      for (const client of waiting) {
        client.removeAllListeners('error');
        client.removeAllListeners('close');
        forward(client);
        client.resume();
      }
      waiting.clear();
    },
    get isCut() {
      return mode !== 'open';
    },
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of [...live, ...waiting]) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
