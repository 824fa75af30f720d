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
    expect(result.stderr).toContain('PORT');
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

  it('creates an is_admin account that can sign in, and refuses a duplicate', async () => {
    const env = { DATABASE_URL: db.url };
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
  });
});
