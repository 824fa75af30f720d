import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cabinetUsageSince, runCli, startDemoGateway, type ClientsGateway } from '../../helpers/clients-gateway.js';

/**
 * The coding agents, headless, with only their documented base-URL and key settings, against the built
 * gateway in demo mode: `@anthropic-ai/claude-code` 2.1.330 (`claude -p`, ANTHROPIC_BASE_URL +
 * ANTHROPIC_API_KEY) on /v1/messages, and `@openai/codex` 0.169.0 (`codex exec`, a custom provider with
 * `wire_api = "responses"`) on /v1 and on the bridge. Their telemetry and update checks fail offline;
 * their model traffic must not. Each run is bounded and prints its output on failure; every model call
 * they made is found billed in the cabinet.
 */

let demo: ClientsGateway;
let home: string;
let work: string;

beforeAll(async () => {
  demo = await startDemoGateway();
  home = await mkdtemp(path.join(tmpdir(), 'baikal-agents-home-'));
  work = await mkdtemp(path.join(tmpdir(), 'baikal-agents-work-'));
  await writeFile(path.join(work, 'notes.txt'), 'Lake Baikal is the deepest lake.\n');
});

afterAll(async () => {
  await demo?.close();
  await Promise.all([home, work].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** What Claude Code prints with --output-format json: the last JSON line. */
function claudeResult(stdout: string): Record<string, any> {
  const line = stdout.trim().split('\n').findLast((l) => l.startsWith('{'));
  return JSON.parse(line ?? '{}');
}

describe('Claude Code 2.1.330 (claude -p) on /v1/messages', () => {
  const claude = (prompt: string) =>
    runCli(
      'claude',
      ['-p', prompt, '--model', 'lm-opus-5', '--output-format', 'json'],
      {
        HOME: home,
        ANTHROPIC_BASE_URL: demo.url,
        ANTHROPIC_API_KEY: demo.keys.family_b,
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      90_000,
      work,
    );

  it('answers a prompt with its defaults (system messages inside messages, adaptive thinking, betas, ?beta=true), billed', async () => {
    const since = new Date();
    const run = await claude('Say hello [sim:words=4]');
    expect(run.code, run.describe()).toBe(0);
    const result = claudeResult(run.stdout);
    expect(result, run.describe()).toMatchObject({ is_error: false, result: 'baikal is the deepest' });
    const events = await cabinetUsageSince(demo, since, 1, (e) => e.endpoint === '/v1/messages' && e.model === 'lm-opus-5');
    for (const event of events) expect(Number(event.amount_usd)).toBeGreaterThan(0);
  }, 120_000);

  it('goes round a tool loop with thinking on: its own Read tool runs, the signed thinking block goes back, the model answers', async () => {
    const since = new Date();
    const run = await claude('What do the notes say? [sim:tool=Read schema-args]');
    expect(run.code, run.describe()).toBe(0);
    const result = claudeResult(run.stdout);
    // Two model turns: the tool call, then (after the tool result, with the thinking block sent back and
    // checked by the upstream's signature) the answer.
    expect(result, run.describe()).toMatchObject({ is_error: false, num_turns: 2, result: 'baikal is the deepest lake on earth and' });
    const events = await cabinetUsageSince(demo, since, 2, (e) => e.endpoint === '/v1/messages' && e.status === 'success');
    expect(events.length).toBeGreaterThanOrEqual(2);
    for (const event of events) expect(Number(event.amount_usd)).toBeGreaterThan(0);
  }, 120_000);
});

describe('Codex 0.169.0 (codex exec, wire_api = "responses")', () => {
  async function codex(base: '/v1' | '/v1/bridge', model: string, key: string, prompt: string) {
    const codexHome = await mkdtemp(path.join(tmpdir(), 'baikal-codex-'));
    await writeFile(
      path.join(codexHome, 'config.toml'),
      [
        `model = "${model}"`,
        'model_provider = "baikal"',
        '',
        '[model_providers.baikal]',
        'name = "Baikal"',
        `base_url = "${demo.url}${base}"`,
        'env_key = "BAIKAL_API_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    try {
      return await runCli('codex', ['exec', '--skip-git-repo-check', prompt], { HOME: codexHome, CODEX_HOME: codexHome, BAIKAL_API_KEY: key }, 120_000, work);
    } finally {
      await rm(codexHome, { recursive: true, force: true });
    }
  }

  it('answers through /v1 (Responses translated to the chat upstream: namespace and hosted tools handled), billed', async () => {
    const since = new Date();
    const run = await codex('/v1', 'gen-5.6-luna', demo.keys.family_a, 'Say hello [sim:words=3]');
    expect(run.code, run.describe()).toBe(0);
    expect(run.stdout, run.describe()).toContain('baikal is the');
    const events = await cabinetUsageSince(demo, since, 1, (e) => e.endpoint === '/v1/responses' && e.model === 'gen-5.6-luna');
    for (const event of events) expect(Number(event.amount_usd)).toBeGreaterThan(0);
  }, 150_000);

  it('goes round a tool loop through the bridge (its exec_command tool runs, the result goes back), billed per turn', async () => {
    const since = new Date();
    const run = await codex('/v1/bridge', 'bridge-opus-5', demo.keys.family_b, 'Run something [sim:tool=exec_command schema-args]');
    expect(run.code, run.describe()).toBe(0);
    expect(run.stdout, run.describe()).toContain('baikal is the deepest lake on earth and');
    const events = await cabinetUsageSince(demo, since, 2, (e) => e.endpoint === '/v1/bridge/responses' && e.status === 'success');
    for (const event of events) expect(Number(event.amount_usd)).toBeGreaterThan(0);
  }, 150_000);
});
