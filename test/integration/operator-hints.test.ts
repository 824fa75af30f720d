import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { spawnGateway, type ServerProcess } from '../helpers/process.js';

/**
 * An operator's commonest upstream mistakes, as the log says them: a base URL without the API's version path (every
 * call 404) and a credential the upstream refuses (401), named by the status probe; a route naming a model the
 * catalog lacks, and catalog models left without a route, named at start.
 */
const KEY = 'sk-hints-upstream-key';

let simulator: Simulator;
let db: TestDatabase;
let dir: string;
let gateway: ServerProcess | undefined;

beforeAll(async () => {
  simulator = await startSimulator({ apiKey: KEY, name: 'hints' });
  db = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-hints-'));
  const upstream = (id: string, baseUrl: string, credentialEnv: string, model: string) => ({ id, kind: 'openai-compatible', baseUrl, credentialEnv, routes: [{ group: 'cheap', models: [model] }] });
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({
      upstreams: [
        upstream('no-version-path', simulator.url, 'HINTS_GOOD_KEY', 'gen-5.6-luna'),
        upstream('wrong-key', `${simulator.url}/v1`, 'HINTS_WRONG_KEY', 'gen-5.6-terra'),
        upstream('fine', `${simulator.url}/v1`, 'HINTS_GOOD_KEY', 'lm-opus-5'),
        upstream('typo', `${simulator.url}/v1`, 'HINTS_GOOD_KEY', 'gen-5.6-lunaa'),
      ],
    }),
  );
}, 60_000);

afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await simulator?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('operator hints in the log', () => {
  it('a 404 asks about the version path, a 401 names the credential variable, a healthy upstream gets none', async () => {
    gateway = await spawnGateway({
      DATABASE_URL: db.url,
      DATA_DIR: dir,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      BAIKAL_CONFIG: path.join(dir, 'baikal.json'),
      HINTS_GOOD_KEY: KEY,
      HINTS_WRONG_KEY: 'sk-not-the-key',
      STATUS_PROBE_SECONDS: '0.2',
    });
    const down = () => gateway!.lines.filter((line) => line.includes('status probe: upstream is down')).map((line) => JSON.parse(line) as Record<string, string>);
    for (const deadline = Date.now() + 10_000; down().length < 2 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    const byUpstream = Object.fromEntries(down().map((entry) => [entry.upstream, entry]));
    expect(Object.keys(byUpstream).sort()).toEqual(['no-version-path', 'wrong-key']);
    expect(byUpstream['no-version-path']).toMatchObject({ reason: 'status 404', hint: `GET ${simulator.url}/models is not found: does baseUrl end with the API's version path (such as /v1)?` });
    expect(byUpstream['wrong-key']).toMatchObject({ reason: 'status 401', hint: 'the upstream refuses our credential: check HINTS_WRONG_KEY' });
    expect(gateway.lines.some((line) => line.includes('"upstream":"fine"') && line.includes('status probe: upstream is up'))).toBe(true);
    // The variable's name, never its value.
    expect(gateway.lines.join('\n')).not.toContain('sk-not-the-key');
  }, 60_000);

  it('at start: a route naming a model the catalog lacks, and the catalog models no route serves', () => {
    const warned = (words: string) => gateway!.lines.filter((line) => line.includes(words)).map((line) => JSON.parse(line) as Record<string, string[]>);
    expect(warned('routes that serve nothing').map((entry) => entry.routes)).toEqual([['typo: model gen-5.6-lunaa is not in the catalog']]);
    const [unrouted] = warned('catalog models with no upstream route').map((entry) => entry.models);
    expect(unrouted).toContain('gen-5.6-sol in cheap');
    for (const routed of ['gen-5.6-luna in cheap', 'gen-5.6-terra in cheap', 'lm-opus-5 in cheap']) expect(unrouted).not.toContain(routed);
  });
});
