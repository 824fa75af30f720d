import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { postgresUser, reachableBy, type OsUser } from '../../src/db/embedded-postgres.js';
import { createLogger } from '../../src/shared/logging.js';

/**
 * A PostgreSQL primary and its streaming standby, both owned by the test: `initdb` in a temp directory, a
 * replication role and its pg_hba line, `pg_basebackup -R` of the primary into a second directory, the standby
 * started on another free port, and the pair returned once the primary's pg_stat_replication shows it streaming.
 * `close()` stops both and removes the directory.
 *
 * The binaries are the distribution's (/usr/lib/postgresql/<newest>/bin, or PG_BIN): the embedded package has
 * no pg_basebackup. PostgreSQL refuses to run as root, so as root (CI) every binary runs as the `postgres` OS
 * user, as the embedded PostgreSQL does (src/db/embedded-postgres.ts, which creates that user when missing).
 */

export interface PgNode {
  port: number;
  dir: string;
  /** A URL on this server as its superuser (with the password). */
  url(database: string): string;
  /** One statement on a fresh connection (`postgres` database unless named). */
  query<R extends pg.QueryResultRow = Record<string, any>>(sql: string, params?: unknown[], database?: string): Promise<R[]>;
}

export interface Standby extends PgNode {
  /** Stops the standby (fast shutdown), as when the replica goes down. */
  stop(): Promise<void>;
  /** Starts it again on the same port and waits until it streams from the primary again. */
  start(): Promise<void>;
  /** Stops replaying WAL (it keeps receiving it), so it falls behind the primary on purpose. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Waits until it has replayed everything the primary had written when this was called. */
  caughtUp(timeoutMs?: number): Promise<void>;
}

export interface ReplicaPair {
  primary: PgNode;
  standby: Standby;
  close(): Promise<void>;
}

const SLOT = 'baikal_test_standby';
const READY_TIMEOUT_MS = 30_000;

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'pg_basebackup'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL server binaries with pg_basebackup in ${root}: install the distribution's postgresql package, or set PG_BIN`);
  return path.join(root, newest, 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Runs a binary to completion as `user` (null: ourselves); rejects with its last lines of output. */
function run(file: string, args: string[], user: OsUser | null, env: NodeJS.ProcessEnv = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...(user ?? {}), env: { ...process.env, LC_ALL: 'C', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: READY_TIMEOUT_MS });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(file)} exited with ${code}: ${output.slice(-2_000)}`))));
  });
}

/** Every postgres this module started, killed should the test process end without closing them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A postgres server process on a data directory: started until "ready to accept", stopped with a fast shutdown. */
class Server {
  private child: ChildProcess | null = null;
  output: string[] = [];

  constructor(
    private readonly bin: string,
    readonly dir: string,
    readonly port: number,
    private readonly user: OsUser | null,
  ) {}

  async start(): Promise<void> {
    const child = spawn(path.join(this.bin, 'postgres'), ['-D', this.dir, '-p', String(this.port)], { ...(this.user ?? {}), cwd: path.dirname(this.dir), env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    child.once('close', () => running.delete(child));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`postgres in ${this.dir} not ready within ${READY_TIMEOUT_MS} ms: ${this.output.slice(-10).join('\n')}`)), READY_TIMEOUT_MS);
      const onOutput = (chunk: Buffer) => {
        this.output.push(...chunk.toString().split('\n').filter(Boolean));
        if (this.output.length > 200) this.output.splice(0, this.output.length - 200);
        if (chunk.toString().includes('ready to accept')) (clearTimeout(timer), resolve());
      };
      child.stdout!.on('data', onOutput);
      child.stderr!.on('data', onOutput);
      child.once('error', (error) => (clearTimeout(timer), reject(error)));
      child.once('close', (code) => (clearTimeout(timer), reject(new Error(`postgres in ${this.dir} exited with ${code}: ${this.output.slice(-10).join('\n')}`))));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

function node(server: Server, password: string): PgNode {
  const url = (database: string) => `postgresql://postgres:${password}@127.0.0.1:${server.port}/${database}`;
  return {
    port: server.port,
    dir: server.dir,
    url,
    query: async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = [], database = 'postgres') => {
      const client = new pg.Client({ connectionString: url(database) });
      client.on('error', () => undefined);
      await client.connect();
      try {
        return (await client.query<R>(sql, params)).rows;
      } finally {
        await client.end();
      }
    },
  };
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The data directories' parent, owned by whoever runs postgres, which must reach it through every parent. */
async function makeBase(user: OsUser | null): Promise<string> {
  if (user && !(await reachableBy(user, tmpdir()))) throw new Error(`the postgres OS user cannot reach ${tmpdir()}: point TMPDIR at a directory it can reach`);
  const base = await mkdtemp(path.join(tmpdir(), 'baikal-replica-'));
  if (user) await chown(base, user.uid, user.gid);
  await chmod(base, 0o700);
  return base;
}

/** initdb with a superuser password, a replication role's pg_hba line, and settings a short-lived test cluster wants. */
async function initPrimary(bin: string, dir: string, user: OsUser | null, password: string): Promise<void> {
  const passwordFile = path.join(path.dirname(dir), 'superuser-password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (user) await chown(passwordFile, user.uid, user.gid);
  await run(path.join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', `--pwfile=${passwordFile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync'], user);
  await rm(passwordFile);
  await appendFile(
    path.join(dir, 'postgresql.conf'),
    // TCP on 127.0.0.1 only (no socket in /var/run/postgresql, which is not ours); fsync off: a test's cluster need not survive a power cut.
    `\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nwal_level = replica\nmax_wal_senders = 4\nmax_replication_slots = 4\nhot_standby = on\nfsync = off\n`,
  );
  await writeFile(
    path.join(dir, 'pg_hba.conf'),
    'local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\nhost replication replicator 127.0.0.1/32 scram-sha-256\n',
  );
}

/** Starts a primary and a streaming standby of it, each on a free port; `databases` are created on the primary first. */
export async function startReplicaPair(databases: string[] = []): Promise<ReplicaPair> {
  const bin = binDir();
  const user = userInfo().uid === 0 ? await postgresUser(createLogger('silent')) : null;
  const base = await makeBase(user);
  const password = randomBytes(12).toString('hex');
  const replicatorPassword = randomBytes(12).toString('hex');
  const primaryServer = new Server(bin, path.join(base, 'primary'), await freePort(), user);
  const standbyServer = new Server(bin, path.join(base, 'standby'), await freePort(), user);
  const close = async () => {
    await standbyServer.stop();
    await primaryServer.stop();
    await rm(base, { recursive: true, force: true });
  };
  try {
    await initPrimary(bin, primaryServer.dir, user, password);
    await primaryServer.start();
    const primary = node(primaryServer, password);
    await primary.query(`create role replicator with replication login password '${replicatorPassword}'`);
    for (const database of databases) await primary.query(`create database "${database}"`);
    // -R writes primary_conninfo (with the password it used) and standby.signal; -C -S: a slot keeps the WAL the standby still needs while it is down.
    await run(path.join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primaryServer.port), '-U', 'replicator', '-D', standbyServer.dir, '-R', '-X', 'stream', '-c', 'fast', '-C', '-S', SLOT, '--no-sync'], user, { PGPASSWORD: replicatorPassword });
    if (!(await readFile(path.join(standbyServer.dir, 'postgresql.auto.conf'), 'utf8')).includes('primary_conninfo')) throw new Error('pg_basebackup -R wrote no primary_conninfo');
    const standby = node(standbyServer, password);
    const streaming = () =>
      waitUntil('the standby streams from the primary', async () => (await primary.query(`select 1 from pg_stat_replication where state = 'streaming'`)).length > 0, READY_TIMEOUT_MS);
    await standbyServer.start();
    await streaming();
    return {
      primary,
      standby: {
        ...standby,
        stop: () => standbyServer.stop(),
        start: async () => {
          await standbyServer.start();
          await streaming();
        },
        pauseReplay: async () => {
          await standby.query('select pg_wal_replay_pause()');
          await waitUntil('the standby paused its replay', async () => (await standby.query(`select pg_get_wal_replay_pause_state() = 'paused' as paused`))[0]!.paused === true, 10_000);
        },
        resumeReplay: async () => void (await standby.query('select pg_wal_replay_resume()')),
        caughtUp: async (timeoutMs = 20_000) => {
          const [{ lsn }] = (await primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')) as [{ lsn: string }];
          await waitUntil(`the standby replayed up to ${lsn}`, async () => (await standby.query(`select pg_last_wal_replay_lsn() >= $1::pg_lsn as done`, [lsn]))[0]!.done === true, timeoutMs);
        },
      },
      close,
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
