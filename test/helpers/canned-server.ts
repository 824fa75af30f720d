import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a canned server answers: a JSON body or SSE text. */
export type CannedAnswer = { json: object } | { sse: string };

export interface CannedServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Sets what every request gets from now on (initially the JSON body `{}`). */
  answer(answer: CannedAnswer): void;
  /** The requests received, oldest first: their path and JSON body. */
  received: { path: string | undefined; body: any }[];
  close(): Promise<void>;
}

/**
 * A local server answering every POST with a canned body, for running an official SDK over what our
 * encoders and renderers write. `ssePieceBytes` writes SSE text in pieces of that many bytes, as a
 * network might deliver them (else in one write).
 */
export async function startCannedServer(options: { ssePieceBytes?: number } = {}): Promise<CannedServer> {
  let answer: CannedAnswer = { json: {} };
  const received: CannedServer['received'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url, body: JSON.parse(body) });
      if ('json' in answer) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const bytes = Buffer.from(answer.sse);
      const piece = options.ssePieceBytes ?? bytes.length;
      for (let i = 0; i < bytes.length; i += piece) res.write(bytes.subarray(i, i + piece));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answer: (next) => void (answer = next),
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
