import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { http } from './clients.js';
import { smtpServer, type Delivered } from './identity.js';

/** One request a receiver got, with what the standardwebhooks library said of its signature. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: any;
  raw: string;
  /** Which of the receiver's secrets verified it (Webhook.verify), by index; empty: none did. */
  verifiedBy: number[];
  at: number;
  /** What the receiver answered. */
  status?: number;
}

export type Answer = number | { status: number; headers?: Record<string, string>; delayMs?: number };

/**
 * A webhook receiver on an ephemeral port: it verifies every request with `Webhook.verify` against each of
 * its `secrets` (set them after creating the endpoint), records it, and answers what `answer` says.
 */
export async function startReceiver(answer: (request: Received, n: number) => Answer = () => 204): Promise<{
  url: string;
  port: number;
  secrets: string[];
  received: Received[];
  ids(): Set<string>;
  close(): Promise<void>;
  server: Server;
}> {
  const secrets: string[] = [];
  const received: Received[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const headers = { 'webhook-id': String(req.headers['webhook-id']), 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) };
    const verifiedBy = secrets.flatMap((secret, index) => {
      try {
        new Webhook(secret).verify(raw, headers);
        return [index];
      } catch {
        return [];
      }
    });
    const request: Received = { id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body: JSON.parse(raw), raw, verifiedBy, at: Date.now() };
    received.push(request);
    const a = answer(request, received.length);
    const { status, headers: extra, delayMs } = typeof a === 'number' ? { status: a, headers: undefined, delayMs: 0 } : a;
    request.status = status;
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    res.writeHead(status, extra).end(status >= 300 ? 'receiver says no' : 'ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    secrets,
    received,
    ids: () => new Set(received.map((r) => r.id)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    server,
  };
}

/** The tests' SMTP server (test/helpers/identity.ts) on an ephemeral port, and the SMTP_URL that reaches it. */
export async function startSmtp(): Promise<{ url: string; delivered: Delivered[]; close(): Promise<void> }> {
  const delivered: Delivered[] = [];
  const smtp = smtpServer(delivered);
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  return { url: `smtp://mailer:smtp-pass@127.0.0.1:${port}`, delivered, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}

export async function gql(url: string, token: string | undefined, query: string, variables: Record<string, unknown> = {}) {
  const response = await http(url, 'POST', '/graphql', { token, body: { query, variables } });
  return response.body as { data: any; errors?: { message: string; extensions?: Record<string, any> }[] };
}

export const ENDPOINT_FIELDS = 'id url description eventTypes enabled disabledReason previousSecretExpiresAt';
export const DELIVERY_FIELDS = 'id endpointId messageId eventType status attempts lastStatusCode lastError lastDurationMs lastResponseBody deliveredAt';

export async function createEndpoint(url: string, token: string, input: Record<string, unknown>): Promise<{ id: string; secret: string; [field: string]: unknown }> {
  const result = await gql(url, token, `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { ${ENDPOINT_FIELDS} secret } }`, { input });
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data.createWebhookEndpoint;
}
