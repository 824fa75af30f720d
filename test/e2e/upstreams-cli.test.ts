import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedState } from '../../src/shared/redis.js';
import { useTestGateway } from '../helpers/gateway.js';
import { runNode } from '../helpers/process.js';
import { adminActor, canary, capturedLog, hexKey, tempDir } from '../helpers/upstreams.js';

const tmp = tempDir();
const ENV_SECRET = canary('cli-env');
const STORED = canary('cli-stored');
const [K1, K2] = [hexKey(), hexKey()];
const upstream = (id: string, baseUrl: string) => ({ id, kind: 'openai-compatible', baseUrl, credentialEnv: 'CLI_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }] });
const configFile = `${tmp.dir}/baikal.json`;
const writeConfig = (upstreams: object[]) => writeFileSync(configFile, JSON.stringify({ upstreams }));
writeConfig([]);

// The gateway's database, which the commands (the built CLI, as an operator runs it) work on.
const gw = useTestGateway({ DATA_DIR: tmp.dir, BAIKAL_SECRET_KEY: K1, CLI_UPSTREAM_KEY: ENV_SECRET });
const REDIS_PREFIX = `test-cli-${randomBytes(6).toString('hex')}:`;
let bus: SharedState;
const heard: unknown[] = [];

beforeAll(async () => {
  await gw.services.managedUpstreams.load();
  bus = new SharedState(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', capturedLog().log, REDIS_PREFIX);
  await bus.connect();
  bus.onMessage((message) => heard.push(message));
});
afterAll(async () => {
  await bus.close();
  tmp.remove();
});

function admin(args: string[], env: Record<string, string> = {}) {
  return runNode(['dist/src/cli/admin.js', ...args], { DATABASE_URL: gw.db.url, DATA_DIR: tmp.dir, BAIKAL_CONFIG: configFile, CLI_UPSTREAM_KEY: ENV_SECRET, BAIKAL_SECRET_KEY: K1, ...env });
}

const everything = (...outputs: { stdout: string; stderr: string }[]) => outputs.map((o) => o.stdout + o.stderr).join('\n');

describe('npm run admin -- apply-upstreams / rotate-secrets', () => {
  it('applies the file: creates, updates by id, keeps the others unless --prune; running gateways hear of it on the bus', async () => {
    writeConfig([upstream('first', 'https://first.example/v1'), upstream('second', 'https://second.example/v1')]);
    const created = await admin(['apply-upstreams'], { REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_PREFIX });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('created first, second; updated none; deleted none');
    expect(created.stdout).not.toContain('running gateways take the change');
    const version = (await gw.db.query<{ version: number }>('select version::int from upstream_state'))[0]!.version;
    for (const deadline = Date.now() + 5_000; !heard.length && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual([{ type: 'upstreams-changed', version }]);
    // The gateway itself catches up by version.
    await gw.services.managedUpstreams.adoptRemote(version);
    expect(gw.services.managedUpstreams.upstreams.map((u) => u.id)).toEqual(['first', 'second']);
    expect(await gw.db.query('select secret_env, sealed_secret from upstream_credentials order by upstream_id')).toEqual([
      { secret_env: 'CLI_UPSTREAM_KEY', sealed_secret: null },
      { secret_env: 'CLI_UPSTREAM_KEY', sealed_secret: null },
    ]);

    writeConfig([upstream('first', 'https://first-moved.example/v1'), upstream('third', 'https://third.example/v1')]);
    const kept = await admin(['apply-upstreams']);
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain('created third; updated first; deleted none');
    expect(kept.stdout).toContain('running gateways take the change when they reload their upstreams');
    const pruned = await admin(['apply-upstreams', '--prune']);
    expect(pruned.stdout).toContain('created none; updated first, third; deleted second');
    expect((await gw.db.query<{ id: string; base_url: string }>('select id, base_url from upstreams order by id')).map((r) => [r.id, r.base_url])).toEqual([
      ['first', 'https://first-moved.example/v1'],
      ['third', 'https://third.example/v1'],
    ]);
    expect(everything(created, kept, pruned)).not.toContain(ENV_SECRET);
  });

  it('refuses an operator file that boot would refuse (a variable unset), and a missing BAIKAL_CONFIG', async () => {
    const unset = await runNode(['dist/src/cli/admin.js', 'apply-upstreams'], { DATABASE_URL: gw.db.url, DATA_DIR: tmp.dir, BAIKAL_CONFIG: configFile });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('CLI_UPSTREAM_KEY is not set');
    const noFile = await runNode(['dist/src/cli/admin.js', 'apply-upstreams'], { DATABASE_URL: gw.db.url, DATA_DIR: tmp.dir });
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toContain('set BAIKAL_CONFIG');
  });

  it('rotates the stored secrets to the new key, prints only a count, and is idempotent', async () => {
    await gw.services.managedUpstreams.poll();
    await gw.services.managedUpstreams.addCredential(adminActor(), { upstreamId: 'first', secret: STORED, label: 'stored' });
    const before = await gw.db.query<{ sealed_secret: string }>('select sealed_secret from upstream_credentials where sealed_secret is not null');

    const refused = await admin(['rotate-secrets'], { BAIKAL_SECRET_KEY: K2 });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^baikal: no configured key opens the stored secret of credential [0-9a-f-]{36}: list the key it was sealed with in BAIKAL_SECRET_KEYS_OLD \(nothing was changed\)\n$/);

    const rotated = await admin(['rotate-secrets'], { BAIKAL_SECRET_KEY: K2, BAIKAL_SECRET_KEYS_OLD: K1 });
    expect(rotated.stderr).toBe('');
    expect(rotated.stdout).toBe('re-encrypted 1 stored upstream secret with the current BAIKAL_SECRET_KEY\n');
    const after = await gw.db.query<{ sealed_secret: string }>('select sealed_secret from upstream_credentials where sealed_secret is not null');
    expect(after[0]!.sealed_secret).not.toBe(before[0]!.sealed_secret);
    const again = await admin(['rotate-secrets'], { BAIKAL_SECRET_KEY: K2, BAIKAL_SECRET_KEYS_OLD: K1 });
    expect(again.stdout).toBe('re-encrypted 0 stored upstream secrets with the current BAIKAL_SECRET_KEY\n');

    const malformed = await admin(['rotate-secrets'], { BAIKAL_SECRET_KEY: 'not-a-key-at-all' });
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toContain('BAIKAL_SECRET_KEY must be 32 bytes');
    expect(malformed.stderr).not.toContain('not-a-key-at-all');
    expect(everything(refused, rotated, again, malformed)).not.toContain(STORED);
    expect(everything(refused, rotated, again, malformed)).not.toContain(K1);
  });
});
