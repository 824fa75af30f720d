import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrlForm, resolveAllowed, UrlRefused, type Resolver } from './url-policy.js';

/** How one attempt ended, as the endpoint's owner sees it (never our internal details). */
export type AttemptError = 'timeout' | 'connection_refused' | 'connection_error' | 'dns' | 'tls' | 'forbidden_address' | 'redirect' | 'status';

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: AttemptError | null;
  durationMs: number;
  /** The receiver's own answer, truncated (for its owner's eyes). */
  responseBody: string | null;
}

export interface DeliverLimits {
  totalMs: number;
  connectMs: number;
  /** At most this much of the answer is read; the rest is discarded. */
  maxResponseBytes: number;
  /** Of which this much is kept for the owner. */
  keptResponseBytes: number;
  allowInsecure: boolean;
  resolve?: Resolver;
}

export const DEFAULT_DELIVER_LIMITS: Omit<DeliverLimits, 'allowInsecure'> = { totalMs: 10_000, connectMs: 5_000, maxResponseBytes: 64 * 1024, keptResponseBytes: 1024 };

/**
 * POSTs one signed body. Bounded in time (connect, then the whole exchange) and in what it reads; redirects
 * are not followed (a 3xx fails); only a 2xx succeeds. The host is resolved and checked here, and the socket
 * connects to that checked address (the `lookup` below answers it), while TLS still verifies the name.
 */
export async function deliver(rawUrl: string, body: string, headers: Record<string, string>, limits: DeliverLimits): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let target: { address: string; family: number };
  let url: URL;
  try {
    url = checkUrlForm(rawUrl, limits.allowInsecure);
    target = await resolveAllowed(url, limits.allowInsecure, limits.resolve);
  } catch (error) {
    const dns = error instanceof UrlRefused && /could not be resolved/.test(error.message);
    return { ok: false, statusCode: null, error: dns ? 'dns' : 'forbidden_address', durationMs: elapsed(), responseBody: null };
  }
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      request.destroy();
      resolve({ ...result, durationMs: elapsed() });
    };
    const fail = (error: AttemptError) => finish({ ok: false, statusCode: null, error, responseBody: null });
    const request = client.request(url, {
      method: 'POST',
      lookup: pinned,
      agent: false,
      headers: { 'content-type': 'application/json', 'user-agent': 'Baikal-Webhooks/1.0', 'content-length': Buffer.byteLength(body).toString(), ...headers },
    });
    const total = setTimeout(() => fail('timeout'), limits.totalMs);
    const connect = setTimeout(() => fail('timeout'), limits.connectMs);
    request.on('socket', (socket) => {
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connect));
    });
    request.on('error', (error: NodeJS.ErrnoException) => fail(classify(error)));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => {
        const kept = Buffer.concat(chunks).subarray(0, limits.keptResponseBytes).toString('utf8');
        const ok = status >= 200 && status < 300;
        finish({ ok, statusCode: status, error: ok ? null : status >= 300 && status < 400 ? 'redirect' : 'status', responseBody: kept || null });
      };
      response.on('data', (chunk: Buffer) => {
        if (read < limits.keptResponseBytes) chunks.push(chunk);
        read += chunk.length;
        if (read >= limits.maxResponseBytes) done(); // the rest is not ours to read
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}

function classify(error: NodeJS.ErrnoException): AttemptError {
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (/CERT|SSL|TLS|ERR_SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code) || /certificate|ssl|tls/i.test(error.message)) return 'tls';
  return 'connection_error';
}
