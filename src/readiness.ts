import type { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import type { SharedState } from './shared/redis.js';

export interface ReadinessReport {
  ready: boolean;
  status: 'ready' | 'starting' | 'draining' | 'degraded';
  database: 'ok' | 'unreachable' | 'not_migrated';
  /** Only with REDIS_URL. `unreachable` still serves: rate limits fall back to this process. */
  redis?: 'ok' | 'unreachable';
}

/** Whether this process should receive traffic: migrated, database answering, not shutting down. */
export class Readiness {
  migrated = false;
  draining = false;
  shared?: SharedState;
  private orm?: MikroORM;

  attach(orm: MikroORM): void {
    this.orm = orm;
  }

  async check(): Promise<ReadinessReport> {
    const report = await this.checkDatabase();
    return this.shared ? { ...report, redis: this.shared.healthy ? 'ok' : 'unreachable' } : report;
  }

  private async checkDatabase(): Promise<ReadinessReport> {
    if (this.draining) return { ready: false, status: 'draining', database: this.migrated ? 'ok' : 'not_migrated' };
    if (!this.orm || !this.migrated) return { ready: false, status: 'starting', database: 'not_migrated' };
    try {
      await withTimeout(this.orm.em.fork().execute('select 1'), 2000);
      return { ready: true, status: 'ready', database: 'ok' };
    } catch {
      return { ready: false, status: 'degraded', database: 'unreachable' };
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** Why this process does not serve data requests right now (starting or stopping), or null when it does. */
export function notServing(readiness: Readiness): { status: 503; headers: Record<string, string>; body: { detail: string; code: string } } | null {
  // A request arriving on a kept-alive connection while this process stops: send it elsewhere.
  if (readiness.draining) return { status: 503, headers: { 'Retry-After': '1', Connection: 'close' }, body: { detail: 'The service is restarting; retry shortly', code: 'shutting_down' } };
  if (!readiness.migrated) return { status: 503, headers: { 'Retry-After': '1' }, body: { detail: 'The service is starting; retry shortly', code: 'starting' } };
  return null;
}

/** Until migrations have run, data endpoints answer 503 instead of failing on a missing table. */
export function requireMigrated(readiness: Readiness) {
  return (_req: Request, res: Response, next: NextFunction) => {
    const refusal = notServing(readiness);
    if (!refusal) return next();
    res.set(refusal.headers).status(refusal.status).json(refusal.body);
  };
}
