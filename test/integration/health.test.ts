import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../helpers/gateway.js';
import { http } from '../helpers/clients.js';

const gw = useTestGateway();

describe('health endpoints (SPEC.md 4.5)', () => {
  it.each(['/status', '/health', '/live'])('%s answers 200 with an object of string values', async (path) => {
    const response = await http(gw.url, 'GET', path);
    expect(response.status).toBe(200);
    expect(response.body).toBeTypeOf('object');
    expect(Object.keys(response.body).length).toBeGreaterThan(0);
    for (const value of Object.values(response.body)) expect(typeof value).toBe('string');
  });

  it('/health names the interface version 1.0.0', async () => {
    expect((await http(gw.url, 'GET', '/health')).body).toMatchObject({ status: 'ok', version: '1.0.0' });
  });

  it('/ready is 200 once migrated with the database answering, 503 when draining', async () => {
    const ready = await http(gw.url, 'GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ready: true, status: 'ready', database: 'ok' });
    gw.readiness.draining = true;
    try {
      const draining = await http(gw.url, 'GET', '/ready');
      expect(draining.status).toBe(503);
      expect(draining.body).toMatchObject({ ready: false, status: 'draining' });
    } finally {
      gw.readiness.draining = false;
    }
  });

  it('/ready is 503 and data endpoints refuse with 503 before migrations ran', async () => {
    gw.readiness.migrated = false;
    try {
      expect((await http(gw.url, 'GET', '/ready')).status).toBe(503);
      const login = await http(gw.url, 'POST', '/auth/login', { body: { login: 'a', password: 'b' } });
      expect(login.status).toBe(503);
      expect(login.headers.get('retry-after')).toBe('1');
      expect((await http(gw.url, 'GET', '/live')).status).toBe(200);
    } finally {
      gw.readiness.migrated = true;
    }
  });

  it('every response carries an x-request-id; a safe caller id is echoed, an unsafe one replaced', async () => {
    const minted = await http(gw.url, 'GET', '/health');
    expect(minted.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{12}[A-Za-z0-9_-]{12}$/);
    const echoed = await http(gw.url, 'GET', '/auth/me', { headers: { 'x-request-id': 'client-trace-12345' } });
    expect(echoed.headers.get('x-request-id')).toBe('client-trace-12345');
    const unsafe = await http(gw.url, 'GET', '/health', { headers: { 'x-request-id': 'bad id\twith<script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('unknown paths answer a JSON 404; no framework banner', async () => {
    const response = await http(gw.url, 'GET', '/nope');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'Not found', code: 'not_found' });
    expect(response.headers.get('x-powered-by')).toBeNull();
  });

  it('a body over 25 MiB is refused with 413 before it is processed', async () => {
    const big = JSON.stringify({ login: 'x'.repeat(26 * 1024 * 1024), password: 'y' });
    const response = await http(gw.url, 'POST', '/auth/login', { rawBody: big });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('payload_too_large');
  });
});
