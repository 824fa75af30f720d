import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseRedisUrl } from '../../src/shared/redis-url.js';

describe('REDIS_URL', () => {
  it('takes one Redis as ioredis reads it', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/2')).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379/2' });
    expect(parseRedisUrl('rediss://user:pw@cache.internal:6380')).toEqual({ kind: 'single', url: 'rediss://user:pw@cache.internal:6380' });
  });

  it('takes a cluster by its seed nodes, with credentials, TLS, IPv6 and the default port', () => {
    expect(parseRedisUrl('redis-cluster://10.0.0.1:7000,10.0.0.2:7001,redis-c.internal')).toEqual({
      kind: 'cluster',
      tls: false,
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'redis-c.internal', port: 6379 },
      ],
    });
    expect(parseRedisUrl('rediss-cluster://app:p%40ss:w0rd@[::1]:7000,[fd00::2]:7001/')).toEqual({
      kind: 'cluster',
      tls: true,
      username: 'app',
      password: 'p@ss:w0rd',
      nodes: [
        { host: '::1', port: 7000 },
        { host: 'fd00::2', port: 7001 },
      ],
    });
    expect(parseRedisUrl('redis-cluster://:secret@h:7000/0')).toMatchObject({ password: 'secret', nodes: [{ host: 'h', port: 7000 }] });
  });

  it('refuses what it would not read, without repeating a password', () => {
    const refusal = (url: string) => {
      try {
        parseRedisUrl(url);
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('http://h:6379')).toMatch(/redis-cluster:\/\//);
    expect(refusal('redis-cluster://')).toMatch(/host:port of each seed node/);
    expect(refusal('redis-cluster://h:7000,,h:7001')).toMatch(/"" is not one/);
    expect(refusal('redis-cluster://h:7000/3')).toMatch(/database 0 only/);
    expect(refusal('redis-cluster://h:7000?scaleReads=slave')).toMatch(/no options/);
    expect(refusal('redis-cluster://h:70000')).toMatch(/out of range/);
    expect(refusal('redis-cluster://user:hunter2@h:port')).not.toContain('hunter2');
  });

  it('is checked at load: a bad one stops the start naming REDIS_URL, a cluster one counts as Redis for WORKERS', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis-cluster://h:7000/5' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_URL: 'redis-cluster://h:7000/5' })).toThrow(/REDIS_URL: a Redis Cluster has database 0 only/);
    const config = loadConfig({ REDIS_URL: 'redis-cluster://h:7000,h:7001', WORKERS: '2' });
    expect(config.redisUrl).toBe('redis-cluster://h:7000,h:7001');
    expect(config.workers).toBe(2);
  });
});
