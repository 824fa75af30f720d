import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runNode, spawnGateway } from '../helpers/process.js';

describe('npm start with no upstream configured', () => {
  let db: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = await mkdtemp(`${tmpdir()}/baikal-demo-`);
  });
  afterAll(async () => {
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const demoKeyOf = (lines: string[]) => lines.map((line) => /"demoKey":"([^"]+)"/.exec(line)?.[1]).find(Boolean);

  it('outside production: serves every text and image model from the built-in simulator with a seeded demo account and key, kept across restarts', async () => {
    const first = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    let key: string | undefined;
    try {
      key = demoKeyOf(first.lines);
      expect(key).toMatch(/^baikal-sk-/);
      expect(first.lines.join('\n')).toContain('DEMO MODE');
      const client = new OpenAI({ apiKey: key, baseURL: `${first.url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'gen-5.6-sol', messages: [{ role: 'user', content: 'Hello from the README' }] });
      expect(completion.choices[0]!.message.content).toBe('baikal is the deepest lake on earth and');
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({ model: 'zeta-5.2', messages: [{ role: 'user', content: 'and streamed?' }], stream: true })) {
        streamed += chunk.choices[0]?.delta.content ?? '';
      }
      expect(streamed).toBe('baikal is the deepest lake on earth and');
      expect((await client.responses.create({ model: 'gen-5.6-luna', input: 'and the Responses API?' })).output_text).toBe('baikal is the deepest lake on earth and');
      const image = await client.images.generate({ model: 'img-1.5', prompt: 'the lake' });
      expect(Buffer.from(image.data![0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
      const me = await fetch(`${first.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json() as Promise<any>);
      expect(me).toMatchObject({ account: { username: 'demo' }, can_spend: true });
      expect(Number(me.balance_usd)).toBeLessThan(10);
      // SIGTERM while a stream is under way: the stream finishes, its usage and ledger row are written, then exit 0.
      const draining = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'slowly [sim:words=10 chunk-delay=80]' }], stream: true }, { headers: { 'x-request-id': 'demo-drain-request' } });
      first.child.kill('SIGTERM');
      let drained = '';
      for await (const chunk of draining) drained += chunk.choices[0]?.delta.content ?? '';
      expect(drained.split(' ')).toHaveLength(10);
      expect(await first.exited, first.lines.slice(-8).join('\n')).toBe(0);
      const [event] = await db.query<{ id: string; status: string; completion_tokens: number }>(`select id, status, completion_tokens from usage_events where request_id = 'demo-drain-request'`);
      expect(event).toMatchObject({ status: 'success', completion_tokens: 10 });
      expect(await db.query(`select 1 from transactions where idempotency_key = $1`, [`usage:${event!.id}`])).toHaveLength(1);
    } finally {
      first.child.kill('SIGKILL');
    }

    const second = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    try {
      expect(demoKeyOf(second.lines)).toBe(key);
      const [{ n }] = (await db.query<{ n: number }>(`select count(*)::int as n from transactions where kind = 'topup'`)) as [{ n: number }];
      expect(n).toBe(1); // the demo balance is credited once
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 120_000);

  it('in production: refuses to boot, saying what to configure (exit 2)', async () => {
    const result = await runNode(['dist/src/main.js'], { NODE_ENV: 'production', DATABASE_URL: db.url, DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No upstreams configured');
    expect(result.stderr).toContain('BAIKAL_CONFIG');
  });
});
