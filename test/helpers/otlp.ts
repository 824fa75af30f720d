import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stand-in for an OpenTelemetry collector's OTLP/HTTP endpoint, and a decoder of the OTLP JSON it receives. */

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
}

export interface Receiver {
  endpoint: string;
  received: Received[];
  close(): Promise<void>;
}


/** An OTLP/HTTP collector stand-in on an ephemeral port: keeps every POST, answers `status`. */
export async function startReceiver(status = 200): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 200 ? '{}' : '{"code":3,"message":"collector refuses"}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    endpoint: `http://127.0.0.1:${port}`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}


export type AttributeValue = string | number | boolean;

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  status: number;
  attributes: Record<string, AttributeValue>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  status?: { code?: number };
  attributes?: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans: Array<{ resource: { attributes: OtlpAttribute[] }; scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }> }>;
}

function valueOf(value: OtlpValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  throw new Error(`unexpected attribute value ${JSON.stringify(value)}`);
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/** Every span of every export received, decoded from OTLP JSON; plus resources and scope names. */
export function decode(received: Received[]) {
  const spans: DecodedSpan[] = [];
  const resources: Array<Record<string, AttributeValue>> = [];
  const scopes: string[] = [];
  for (const request of received) {
    const body = JSON.parse(request.raw) as OtlpExport;
    for (const rs of body.resourceSpans) {
      resources.push(attributesOf(rs.resource.attributes));
      for (const ss of rs.scopeSpans) {
        scopes.push(ss.scope.name);
        for (const s of ss.spans) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            start: BigInt(s.startTimeUnixNano),
            end: BigInt(s.endTimeUnixNano),
            status: s.status?.code ?? 0,
            attributes: attributesOf(s.attributes),
          });
        }
      }
    }
  }
  return { spans, resources, scopes };
}

