import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireAdmin, type Actor } from '../shared/actor.js';
import { primaryReads, type AnalyticsReads } from '../shared/analytics-reads.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import { parseInput } from '../shared/validation.js';
import { dateTime } from './analytics.service.js';
import { MarginRepository, type MarginRow, type UpstreamUsageLine } from './margin.repository.js';

export type { MarginRow, UpstreamUsageLine } from './margin.repository.js';

export interface MarginReport {
  from: Date;
  to: Date;
  totals: MarginRow;
  byDay: MarginRow[];
  byModel: MarginRow[];
  byGroup: MarginRow[];
  byUpstream: MarginRow[];
}

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

export const marginQuery = z.object({ from: dateTime.optional(), to: dateTime.optional() });
export const upstreamUsageQuery = z.object({ from: dateTime.optional(), to: dateTime.optional(), upstreamId: z.string().trim().min(1).max(64).optional() });
export type MarginQuery = z.input<typeof marginQuery>;
export type UpstreamUsageQuery = z.input<typeof upstreamUsageQuery>;

/**
 * The operator's money view (admins only): what customers paid, what the upstreams charged for the same
 * requests, and the margin between, by day, model, group and upstream; and each upstream's own usage as its
 * invoice would show it, to reconcile. Summed exactly in PostgreSQL (numeric) from the usage events.
 *
 * Revenue is every event's `amount_usd` (successes, and streams cut and billed for what was delivered);
 * cost is `upstream_cost_usd` where the upstream had a price for the request. A request without one has a
 * cost unknown, not zero: it is counted apart (`uncostedRequests`, `uncostedRevenueUsd`) and its revenue
 * is left out of the margin, so the margin never counts revenue whose cost is not known.
 */
export class MarginService {
  private readonly usage: MarginRepository;

  /** `reads`: where the analytics read (the read replica, when configured); the primary (`orm`) when absent. */
  constructor(private readonly deps: { orm: MikroORM; reads?: AnalyticsReads; clock: Clock }) {
    this.usage = new MarginRepository(deps.reads ?? primaryReads(deps.orm));
  }

  async report(actor: Actor, raw: MarginQuery): Promise<MarginReport> {
    requireAdmin(actor);
    const { from, to } = this.period(parseInput(marginQuery, raw ?? {}));
    return { from, to, ...(await this.usage.marginSums(from, to)) };
  }

  async upstreamUsage(actor: Actor, raw: UpstreamUsageQuery): Promise<UpstreamUsageLine[]> {
    requireAdmin(actor);
    const query = parseInput(upstreamUsageQuery, raw ?? {});
    const { from, to } = this.period(query);
    return this.usage.upstreamUsage(from, to, query.upstreamId);
  }

  /** Default: the last 30 days to now. At most a year, so one question never reads the whole history. */
  private period(query: { from?: Date; to?: Date }): { from: Date; to: Date } {
    const to = query.to ?? this.deps.clock.now();
    const from = query.from ?? new Date(to.getTime() - 30 * DAY_MS);
    if (from >= to) throw new DomainError('validation_failed', 'from must be before to', { issues: [{ loc: ['from'], msg: 'from must be before to', type: 'value_error' }] });
    if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) throw new DomainError('validation_failed', `The period is at most ${MAX_DAYS} days`, { issues: [{ loc: ['from'], msg: `the period is at most ${MAX_DAYS} days`, type: 'value_error' }] });
    return { from, to };
  }
}

