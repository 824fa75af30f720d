import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, newAccountInput } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runNode, spawnGateway } from '../helpers/process.js';

describe('the built gateway process', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(`${tmpdir()}/baikal-e2e-`);
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('with no DATABASE_URL: starts an embedded PostgreSQL, serves, drains on SIGTERM, and keeps its data across restarts', async () => {
    const account = newAccountInput();
    const first = await spawnGateway({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    try {
      expect(first.lines.some((line) => line.includes('using embedded PostgreSQL'))).toBe(true);
      expect((await http(first.url, 'GET', '/health')).status).toBe(200);
      expect((await http(first.url, 'GET', '/ready')).body).toMatchObject({ ready: true });
      const registered = await http(first.url, 'POST', '/auth/register', { body: account, headers: { 'x-request-id': 'e2e-register-0001' } });
      expect(registered.status).toBe(201);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const logged = first.lines.join('\n');
      expect(logged).toContain('shutdown complete');
      // Every line written while serving the request carries its id; the password never reaches the log.
      expect(first.lines.filter((line) => line.includes('e2e-register-0001')).length).toBeGreaterThanOrEqual(2);
      expect(logged).not.toContain(account.password);
    } finally {
      first.child.kill('SIGKILL');
    }

    const second = await spawnGateway({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    try {
      expect(second.lines.join('\n')).not.toContain('initialising embedded PostgreSQL');
      const login = await http(second.url, 'POST', '/auth/login', { body: { login: account.username, password: account.password } });
      expect(login.status).toBe(200);
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    } finally {
      second.child.kill('SIGKILL');
    }
  }, 120_000);

  it('refuses to start on bad configuration, naming the variable (exit 2)', async () => {
    const result = await runNode(['dist/src/main.js'], { PORT: 'not-a-port', DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('baikal: Invalid environment: PORT: must be a number, not "not-a-port"');
  });

  it('refuses several workers without Redis, saying why (exit 2)', async () => {
    const result = await runNode(['dist/src/main.js'], { WORKERS: '2', DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('WORKERS=2 needs REDIS_URL');
  });
});

describe('the admin bootstrap CLI', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  /** What a gateway on this database logs in its first second (the admin check runs just after the ready line). */
  const startLog = async (dataDir: string) => {
    const gateway = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, NODE_ENV: 'test', LOG_LEVEL: 'info', STATUS_PROBE_SECONDS: '0' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    gateway.child.kill('SIGTERM');
    await gateway.exited;
    return gateway.lines.join('\n');
  };

  it('creates an is_admin account that can sign in, and refuses a duplicate; a start says how to make one until there is one', async () => {
    const env = { DATABASE_URL: db.url };
    const dataDir = await mkdtemp(`${tmpdir()}/baikal-admin-`);
    expect(await startLog(dataDir)).toContain('no admin account yet: `npm run admin -- create --email EMAIL --password PASSWORD`');
    const created = await runNode(['dist/src/cli/admin.js', 'create', '--email', 'Root@Example.test', '--password', 'correct-horse-battery'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('admin account created');
    const rows = await db.query('select username, email, is_admin, email_verified from users');
    expect(rows).toEqual([{ username: 'Root', email: 'root@example.test', is_admin: true, email_verified: true }]);

    const again = await runNode(['dist/src/cli/admin.js', 'create', '--email', 'root@example.test', '--password', 'correct-horse-battery'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');

    const weak = await runNode(['dist/src/cli/admin.js', 'create', '--email', 'other@example.test', '--password', 'short'], env);
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('--password');
    expect(await startLog(dataDir)).not.toContain('no admin account yet');
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);
});

describe('the catalog loader CLI', () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(`${tmpdir()}/baikal-catalog-`);
  });
  afterAll(async () => {
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('replaces the stored catalog with the operator file, and refuses an invalid one without changing anything', async () => {
    const { writeFile } = await import('node:fs/promises');
    const catalog = {
      families: [{ id: 'acme', label: 'Acme' }],
      groups: [{ id: 'fast', label: 'Fast' }],
      plans: [{ id: 'standard', label: 'Standard', public: true }],
      defaultPlan: 'standard',
      models: [{ id: 'acme-1', label: 'Acme 1', family: 'acme', kind: 'text', endpoints: ['/v1/chat/completions'], groups: { fast: { tokens: { input: '1', output: '2' } } } }],
    };
    await writeFile(`${dir}/catalog.json`, JSON.stringify(catalog));
    const loaded = await runNode(['dist/src/cli/admin.js', 'load-catalog'], { DATABASE_URL: db.url, BAIKAL_CATALOG: `${dir}/catalog.json` });
    expect(loaded.stderr).toBe('');
    expect(loaded.stdout).toContain('catalog version 2 loaded: 1 models');
    const [row] = await db.query<{ ids: string[] }>(`select array(select jsonb_array_elements(data->'models')->>'id') as ids from catalog`);
    expect(row!.ids).toEqual(['acme-1']);

    await writeFile(`${dir}/bad.json`, JSON.stringify({ ...catalog, models: [{ ...catalog.models[0], family: 'nobody' }] }));
    const refused = await runNode(['dist/src/cli/admin.js', 'load-catalog'], { DATABASE_URL: db.url, BAIKAL_CATALOG: `${dir}/bad.json` });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unknown family nobody');
    const [{ version }] = await db.query<{ version: number }>('select version from catalog');
    expect(version).toBe(2);
  });
});
