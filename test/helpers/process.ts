import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The project's root: the nearest folder up with a package.json (from test/helpers, or from the bench's build in dist-bench/). */
export const ROOT = (() => {
  let dir = path.dirname(new URL(import.meta.url).pathname);
  while (!existsSync(path.join(dir, 'package.json'))) {
    if (dir === path.dirname(dir)) throw new Error('no package.json above the test helpers');
    dir = path.dirname(dir);
  }
  return dir;
})();
/** Node 24 from the project's own dependencies, never the machine's Node (STACK.md). */
export const NODE = path.join(ROOT, 'node_modules/.bin/node');

/** The gateway's command line as `npm start` has it (package.json): Node's flags, then the script. */
export const START_ARGS: string[] = (() => {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const [node, ...args] = start.split(' ').filter(Boolean);
  if (node !== 'node' || args.at(-1) !== 'dist/src/main.js') throw new Error(`unexpected start script: ${start}`);
  return args;
})();

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  lines: string[];
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

function cleanEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) base[key] = value;
  return base;
}

/**
 * Runs the built gateway (`dist/src/main.js`) as `npm start` would, and waits for its ready line (logged at info).
 * `wrapper`: a command that runs it, e.g. `['ip', 'netns', 'exec', name]` (which execs in place: the child's pid
 * is the gateway's). `readyAt`: the gateway's URL (a fixed HOST and PORT), to wait for its `/ready` instead of
 * the line, so it may log at warn (at info it logs every request: a cost under load, and lines kept here).
 */
export async function spawnGateway(env: Record<string, string | undefined>, timeoutMs = 60_000, wrapper: string[] = [], readyAt?: string): Promise<ServerProcess> {
  const [command, ...args] = [...wrapper, NODE, ...START_ARGS];
  const child = spawn(command!, args, { cwd: ROOT, env: cleanEnv({ HOST: '127.0.0.1', PORT: '0', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway not ready in ${timeoutMs} ms:\n${lines.join('\n')}`)), timeoutMs);
    const onLine = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        lines.push(line);
        const match = line.match(/"url":"(http:\/\/[^"]+)"/);
        if (match && line.includes('gateway ready')) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    if (readyAt) void pollReady(readyAt, () => child.exitCode === null && child.signalCode === null).then(() => (clearTimeout(timer), resolve(readyAt)));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before ready:\n${lines.join('\n')}`));
    });
  });
  return { child, url, lines, exited };
}

/** Resolves once `url`/ready answers 200, polling while `alive()`. */
async function pollReady(url: string, alive: () => boolean): Promise<void> {
  while (alive()) {
    if (await fetch(`${url}/ready`).then((r) => r.ok, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise(() => undefined); // the exit rejects the wait
}

/** Runs a built CLI to completion; one still running after `timeoutMs` is killed (its code is then null). */
export function runNode(args: string[], env: Record<string, string | undefined>, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(NODE, args, { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
