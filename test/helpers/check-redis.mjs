// Before `npm test` builds anything: Redis must answer (it cannot be embedded, unlike PostgreSQL). Without it the
// whole run would build, then fail every file; this says the one thing to do, and stops.
import { connect } from 'node:net';

const url = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
const address = `${url.hostname || '127.0.0.1'}:${url.port || 6379}`;
const socket = connect(Number(url.port || 6379), url.hostname || '127.0.0.1');
let done = false;
const finish = (ok) => {
  if (done) return;
  done = true;
  clearTimeout(timer);
  socket.destroy();
  if (!ok) {
    process.stderr.write(`Tests need Redis at ${address}: start it (e.g. \`redis-server --daemonize yes\`) or set TEST_REDIS_URL\n`);
    process.exitCode = 1;
  }
};
const timer = setTimeout(() => finish(false), 3_000);
socket.on('error', () => finish(false));
socket.on('connect', () => socket.write('PING\r\n'));
// +PONG, or -NOAUTH from a Redis that wants a password (the tests' own client says what is wrong then).
socket.on('data', (data) => finish(/^[+-]/.test(data.toString())));
