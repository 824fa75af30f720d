import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';
import { UsagePartitionsRepository, type PartitionSession, type UsagePartition } from './usage-partitions.repository.js';

/**
 * The upkeep of usage_events' monthly partitions (docs/partitioning.md; the table was partitioned by
 * migrations/Migration20261130000000_usage_partitions.ts): partitions made ahead, and whole months dropped past
 * the retention once their rollups are verified. One gateway process at a time does it (an advisory lock; the
 * others skip the round), at start and hourly (src/server.ts). The SQL is in usage-partitions.repository.ts.
 */

export type { UsagePartition } from './usage-partitions.repository.js';

export interface UsagePartitionSettings {
  /** USAGE_RETENTION_MONTHS: whole months kept before the current one; null keeps everything. */
  retentionMonths: number | null;
}

export interface MaintenanceRound {
  /** Why nothing was done: another process holds the lock, or usage_events is not partitioned (yet). */
  skipped?: 'busy' | 'not partitioned';
  created: string[];
  dropped: string[];
  /** Partitions past the retention kept: their rollups did not match their events, or a lock was not had in time (both logged). */
  kept: string[];
}

/** Months made ahead of the current one: an insert finds its month's partition long before the month begins. */
export const AHEAD_MONTHS = 3;

/** The first instant of the UTC month `offset` months after the one holding `at`. */
export function monthStart(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

/** `usage_events_2026_12` for December 2026 (UTC): the migration names its months the same way. */
export function monthPartitionName(month: Date): string {
  return `usage_events_${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

const LOCK_MISSED = 'usage partition upkeep did not get its lock within 1 s (a long query on usage_events?); the next round tries again';

export class UsagePartitions {
  private readonly repository: UsagePartitionsRepository;

  constructor(private readonly deps: { orm: MikroORM; log: Logger; clock: Clock; settings: UsagePartitionSettings }) {
    this.repository = new UsagePartitionsRepository(deps.orm);
  }

  /** One round: this month's and the next AHEAD_MONTHS' partitions made, then the retention applied. */
  async maintain(): Promise<MaintenanceRound> {
    const round: MaintenanceRound = { created: [], dropped: [], kept: [] };
    const outcome = await this.repository.underLock(async (session) => {
      const partitions = await session.partitions();
      if (!partitions) return { ...round, skipped: 'not partitioned' as const };
      await this.makeAhead(session, partitions, round);
      if (this.deps.settings.retentionMonths !== null) await this.applyRetention(session, partitions, this.deps.settings.retentionMonths, round);
      return round;
    });
    return outcome === 'busy' ? { ...round, skipped: 'busy' } : outcome;
  }

  /** usage_events' partitions, oldest first (the default last); null when the table is not partitioned. */
  partitions(): Promise<UsagePartition[] | null> {
    return this.repository.partitions();
  }

  /** Makes every month from this one to AHEAD_MONTHS ahead that no partition covers yet. */
  private async makeAhead(session: PartitionSession, partitions: UsagePartition[], round: MaintenanceRound): Promise<void> {
    const now = this.deps.clock.now();
    const fallback = partitions.find((partition) => partition.isDefault)?.name ?? null;
    for (let month = monthStart(now); month <= monthStart(now, AHEAD_MONTHS); month = monthStart(month, 1)) {
      const next = monthStart(month, 1);
      if (partitions.some((p) => !p.isDefault && (p.from === null || p.from < next) && (p.to === null || p.to > month))) continue;
      const name = monthPartitionName(month);
      const moved = await session.createMonth(name, month, next, fallback);
      if (moved === null) {
        this.deps.log.warn({ partition: name }, LOCK_MISSED);
        continue;
      }
      partitions.push({ name, from: month, to: next, isDefault: false });
      round.created.push(name);
      this.deps.log.info({ partition: name, movedFromDefault: moved }, `created usage partition ${name}`);
    }
  }

  /**
   * Drops, oldest first, each partition that ends at or before the retention's cutoff (so never the current or the
   * previous month) and whose rollups are safe: for every hour of it the hourly rollups hold exactly its events'
   * figures. The batch writer keeps them so in the statement that writes the events; the check makes sure (a row
   * written around the writer, a rollup edited) before anything is lost. The rollups answer for those months after.
   */
  private async applyRetention(session: PartitionSession, partitions: UsagePartition[], retentionMonths: number, round: MaintenanceRound): Promise<void> {
    const cutoff = monthStart(this.deps.clock.now(), -Math.max(1, retentionMonths));
    for (const partition of partitions) {
      if (partition.isDefault || partition.to === null || partition.to > cutoff) continue;
      const range = { partition: partition.name, from: partition.from, to: partition.to };
      const outcome = await session.dropIfRollupsMatch(partition);
      if (outcome?.dropped) {
        round.dropped.push(partition.name);
        this.deps.log.info({ ...range, events: Number(outcome.check.events) }, `dropped usage partition ${partition.name} (older than USAGE_RETENTION_MONTHS; its hourly rollups match its events and stay)`);
        continue;
      }
      round.kept.push(partition.name);
      if (!outcome) this.deps.log.warn(range, LOCK_MISSED);
      else {
        this.deps.log.warn(
          { ...range, ...outcome.check },
          `kept usage partition ${partition.name} past USAGE_RETENTION_MONTHS: its hourly rollups do not match its events (rows of (account, hour, model, group, family) without a rollup, without events, or with other figures)`,
        );
      }
    }
  }
}
