import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../../src/shared/errors.js';
import { formatUsd } from '../../src/shared/money.js';
import { intParam, parseInput } from '../../src/shared/validation.js';
import { ConfigError, loadConfig } from '../../src/config.js';

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error.issues;
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('parseInput', () => {
  const schema = z.strictObject({ name: z.string().min(2), limit: intParam(1, 100, 25) });

  it('reports missing, wrong type, unknown keys and bounds in SPEC.md shape', () => {
    expect(issuesOf(() => parseInput(schema, {}))).toEqual([{ loc: ['name'], msg: 'Field required', type: 'missing' }]);
    expect(issuesOf(() => parseInput(schema, { name: 5 }))).toEqual([{ loc: ['name'], msg: 'Input should be a valid string', type: 'string_type' }]);
    expect(issuesOf(() => parseInput(schema, { name: 'ok', x: 1, y: 2 })).map((i) => [i.loc, i.type])).toEqual([
      [['x'], 'extra_forbidden'],
      [['y'], 'extra_forbidden'],
    ]);
    expect(issuesOf(() => parseInput(schema, { name: 'ok', limit: '0' }))[0]).toMatchObject({ loc: ['limit'], type: 'greater_than_equal' });
    expect(issuesOf(() => parseInput(schema, { name: 'ok', limit: 101 }))[0]).toMatchObject({ loc: ['limit'], type: 'less_than_equal' });
    expect(issuesOf(() => parseInput(schema, { name: 'ok', limit: '1e2' }))[0]).toMatchObject({ loc: ['limit'], type: 'int_parsing' });
  });

  it('applies the default and accepts digit strings', () => {
    expect(parseInput(schema, { name: 'ok' })).toEqual({ name: 'ok', limit: 25 });
    expect(parseInput(schema, { name: 'ok', limit: ' 100 ' })).toEqual({ name: 'ok', limit: 100 });
  });

  it('prefixes locations per transport', () => {
    const error = new DomainError('validation_failed', 'x', { issues: [{ loc: ['limit'], msg: 'm', type: 't' }] });
    expect(error.withLocPrefix(['query']).issues[0]!.loc).toEqual(['query', 'limit']);
  });
});

describe('formatUsd', () => {
  it.each([
    ['0', '0'],
    ['10.5000000000', '10.5'],
    ['-0.0000000000', '0'],
    ['0.00000000001', '0'],
    ['0.00000000005', '0'],
    ['0.00000000015', '0.0000000002'],
    ['123456789012345678.1234567891', '123456789012345678.1234567891'],
    ['1e-7', '0.0000001'],
  ])('%s -> %s (10 places, half-even, no exponent)', (input, expected) => {
    expect(formatUsd(input)).toBe(expected);
  });
});

describe('loadConfig', () => {
  it('uses documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, host: '0.0.0.0', databaseUrl: undefined, nodeEnv: 'development' });
    expect(config.dataDir.endsWith('.data')).toBe(true);
    expect(config.operator.brand.keyPrefix).toBe('baikal');
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', NODE_ENV: 'staging' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', NODE_ENV: 'staging' });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('PORT');
      expect(message).toContain('DATABASE_URL');
      expect(message).toContain('NODE_ENV');
    }
  });

  it('DATABASE_READ_URL: a postgres URL, unset when empty, and a bad one named without the password it holds', () => {
    expect(loadConfig({}).databaseReadUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_READ_URL: ' ' }).databaseReadUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_READ_URL: 'postgresql://reader:pw@replica:5432/baikal' }).databaseReadUrl).toBe('postgresql://reader:pw@replica:5432/baikal');
    for (const bad of ['mysql://reader:hunter2-secret@replica/baikal', 'postgresql://reader:hunter2-secret@[replica/baikal']) {
      expect(() => loadConfig({ DATABASE_READ_URL: bad })).toThrow(/DATABASE_READ_URL/);
      expect(() => loadConfig({ DATABASE_READ_URL: bad })).not.toThrow(/hunter2/);
    }
  });

  it('USAGE_RETENTION_MONTHS: unset keeps everything; a whole number of months from 1; anything else is refused naming it', () => {
    expect(loadConfig({}).usagePartitions).toEqual({ retentionMonths: null });
    expect(loadConfig({ USAGE_RETENTION_MONTHS: '' }).usagePartitions).toEqual({ retentionMonths: null });
    expect(loadConfig({ USAGE_RETENTION_MONTHS: ' 13 ' }).usagePartitions).toEqual({ retentionMonths: 13 });
    for (const bad of ['0', '-1', '1.5', 'twelve', '10000']) expect(() => loadConfig({ USAGE_RETENTION_MONTHS: bad })).toThrow(/USAGE_RETENTION_MONTHS: must be a whole number of months from 1/);
  });

  it('reads and validates the operator file', async () => {
    const { writeFile, mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(`${tmpdir()}/baikal-config-`);
    await writeFile(`${dir}/ok.json`, JSON.stringify({ brand: { keyPrefix: 'acme' } }));
    expect(loadConfig({ BAIKAL_CONFIG: `${dir}/ok.json` }).operator.brand.keyPrefix).toBe('acme');
    await writeFile(`${dir}/bad.json`, JSON.stringify({ brand: { keyPrefix: 'Not Valid!' } }));
    expect(() => loadConfig({ BAIKAL_CONFIG: `${dir}/bad.json` })).toThrow(/brand\.keyPrefix/);
    expect(() => loadConfig({ BAIKAL_CONFIG: `${dir}/missing.json` })).toThrow(/BAIKAL_CONFIG: cannot read/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('upstream configuration', () => {
  async function configWith(upstreams: unknown, env: Record<string, string> = {}) {
    const { writeFile, mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(`${tmpdir()}/baikal-upstreams-`);
    try {
      await writeFile(`${dir}/operator.json`, JSON.stringify({ upstreams }));
      return loadConfig({ BAIKAL_CONFIG: `${dir}/operator.json`, ...env });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const primary = {
    id: 'primary',
    kind: 'openai-compatible',
    baseUrl: 'https://canary.invalid/v1',
    credentialEnv: 'PRIMARY_KEY',
    routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }],
  };

  it('resolves credentials from the environment, with default timeouts and weights', async () => {
    const config = await configWith([primary], { PRIMARY_KEY: 'sk-CANARY-123' });
    expect(config.upstreams).toHaveLength(1);
    expect(config.upstreams[0]).toMatchObject({
      id: 'primary',
      credentials: [{ id: 'env:PRIMARY_KEY', secret: 'sk-CANARY-123', maxConcurrent: null }],
      timeouts: { connectMs: 5000, firstByteMs: 60000, idleMs: 120000, keepAliveMs: 4000 },
      maxConcurrent: 32,
      health: { windowMs: 30_000, minFailures: 5, failureRate: 0.5, cooldownMs: 5_000, maxCooldownMs: 60_000, stallMs: 1_000 },
    });
    expect(config.upstreams[0]!.routes).toEqual([{ model: 'gen-5.6-luna', group: 'cheap', upstreamModel: 'gen-5.6-luna', weight: 1, priority: 0 }]);
    expect((await configWith(undefined)).upstreams).toEqual([]);
  });

  it('reads a pool of credentials, priorities and the upstream’s own prices', async () => {
    const pooled = { ...primary, credentialEnv: undefined, credentials: [{ env: 'KEY_A' }, { env: 'KEY_B', label: 'second account', maxConcurrent: 4 }], routes: [{ group: 'cheap', models: ['gen-5.6-luna'], priority: 5 }], prices: { 'gen-5.6-luna': { inputPer1m: '0.01', outputPer1m: '0.03' } } };
    const config = await configWith([pooled], { KEY_A: 'sk-a', KEY_B: 'sk-b' });
    expect(config.upstreams[0]!.credentials.map((c) => [c.id, c.label, c.secret, c.maxConcurrent])).toEqual([['env:KEY_A', 'KEY_A', 'sk-a', null], ['env:KEY_B', 'second account', 'sk-b', 4]]);
    expect(config.upstreams[0]!.routes[0]!.priority).toBe(5);
    expect(config.upstreams[0]!.prices['gen-5.6-luna']).toEqual({ inputPer1m: '0.01', outputPer1m: '0.03', cacheReadPer1m: null, cacheWritePer1m: null, perImage: null, perVideoSecond: null });
    await expect(configWith([pooled], { KEY_A: 'sk-a' })).rejects.toThrow(/primary: KEY_B is not set/);
    await expect(configWith([{ ...pooled, credentialEnv: 'PRIMARY_KEY' }], { KEY_A: 'sk-a', KEY_B: 'b', PRIMARY_KEY: 'p' })).rejects.toThrow(/either credentialEnv or a non-empty credentials list/);
  });

  it('names a missing credential variable without printing any value', async () => {
    await expect(configWith([primary], {})).rejects.toThrow(/primary: PRIMARY_KEY is not set/);
  });

  it('refuses credentials in URLs, unknown fallbacks and duplicate ids', async () => {
    await expect(configWith([{ ...primary, baseUrl: 'https://user:sk-secret@canary.invalid/v1' }], { PRIMARY_KEY: 'x' })).rejects.toThrow(/must not carry credentials/);
    await expect(configWith([{ ...primary, baseUrl: 'ftp://canary.invalid' }], { PRIMARY_KEY: 'x' })).rejects.toThrow(/http\(s\) URL/);
    await expect(configWith([{ ...primary, fallback: ['nowhere'] }], { PRIMARY_KEY: 'x' })).rejects.toThrow(/unknown upstream nowhere/);
    await expect(configWith([primary, primary], { PRIMARY_KEY: 'x' })).rejects.toThrow(/duplicate upstream id primary/);
    const error = await configWith([{ ...primary, baseUrl: 'https://user:sk-secret@canary.invalid/v1' }], { PRIMARY_KEY: 'x' }).catch((e: Error) => e);
    expect((error as Error).message).not.toContain('sk-secret');
  });
});
