/**
 * The hosts phase's TCP forwarders (hosts-phase.ts), in a process of their own so their work does not land on the
 * load generator's event loop. Listens on the address given as its argument; reads one request a line on stdin,
 * `{ "id": 1, "host": "127.0.0.1", "port": 5432 }`, and answers `{ "id": 1, "port": <its port> }` on stdout. Exits
 * when stdin closes.
 */
import { createInterface } from 'node:readline';
import { startTcpForwarder } from '../helpers/tcp-forwarder.js';

const listen = process.argv[2]!;
for await (const line of createInterface({ input: process.stdin })) {
  const { id, host, port } = JSON.parse(line) as { id: number; host: string; port: number };
  const forwarder = await startTcpForwarder({ host, port }, { listen });
  process.stdout.write(`${JSON.stringify({ id, port: forwarder.port })}\n`);
}
process.exit(0);
