/**
 * The physical limit the benchmark compares the gateway against: node:http in, undici out, nothing
 * else (no auth, no limits, no billing). Bodies and SSE streams are piped through untouched.
 * Usage: node bare-proxy.js <upstream base URL> <port> <upstream credential>
 */
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const [upstream, port, credential] = process.argv.slice(2) as [string, string, string];
const pool = new Pool(upstream, { connections: 256 });

const server = createServer((req, res) => {
  pool
    .request({ method: 'POST', path: req.url!, headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` }, body: req })
    .then(async (answer) => {
      res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
      await pipeline(answer.body, res);
    })
    .catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => void pool.close().then(() => process.exit(0))));
