import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../shared/logging.js';

/** A segment is closed for new records past this many (its file goes once all of them are written). */
const SEGMENT_RECORDS = 20_000;

interface Segment {
  file: string;
  fd: number;
  records: number;
}

/**
 * The usage records a process has answered but not yet written to PostgreSQL, kept in files of its own under
 * DATA_DIR: a record is written there (one `write`, no fsync) before its batch is, so a process killed with
 * SIGKILL, or one that died for any reason but its host, loses no bill: what the kernel was handed outlives the
 * process, and the next process started on that DATA_DIR and database writes them (every write is idempotent on
 * the events' ids: a record already written is skipped). Only a host losing its page cache (power, a kernel
 * crash) loses the last batches, as before.
 *
 * Files are `<pid>-<random>-<n>.jsonl` in a directory of the database's own (its system identifier and name),
 * so a DATA_DIR shared with another database never replays into the wrong one. A file whose process is alive is
 * never touched by another (several processes share a DATA_DIR: WORKERS, tests).
 */
export class UsageJournal {
  private readonly segments: Segment[] = [];
  private readonly prefix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private opened = 0;
  /** Records written to PostgreSQL that are still counted in the oldest segments. */
  private committedAhead = 0;
  private broken = false;

  private constructor(
    private readonly dir: string,
    private readonly log: Logger,
  ) {
    mkdirSync(dir, { recursive: true });
    this.segments.push(this.openSegment());
  }

  static open(dir: string, log: Logger): UsageJournal {
    return new UsageJournal(dir, log);
  }

  /**
   * Keeps one record (its JSON line) until `committed` says it is written. A journal that cannot write (its
   * directory gone, the disk full) says so once and keeps nothing more: billing goes on without it, as before it.
   */
  append(json: string): void {
    if (this.broken) return;
    try {
      let current = this.segments.at(-1)!;
      if (current.records >= SEGMENT_RECORDS) this.segments.push((current = this.openSegment()));
      writeSync(current.fd, `${json}\n`);
      current.records += 1;
    } catch (error) {
      this.broken = true;
      this.log.error({ err: error, dir: this.dir }, 'the usage journal cannot write: a process killed now loses the bills not yet written');
    }
  }

  /** The oldest `count` records are written: files holding only written records go. */
  committed(count: number): void {
    if (this.broken) return;
    this.committedAhead += count;
    while (this.segments.length && this.committedAhead >= this.segments[0]!.records) {
      const [oldest] = this.segments;
      this.committedAhead -= oldest!.records;
      if (this.segments.length === 1) {
        // The only file: emptied in place rather than replaced.
        quietly(() => ftruncateSync(oldest!.fd, 0));
        oldest!.records = 0;
        return;
      }
      this.segments.shift();
      quietly(() => closeSync(oldest!.fd));
      quietly(() => unlinkSync(oldest!.file));
    }
  }

  /**
   * The records of processes that died with some unwritten: each dead process's files are taken (renamed, so no
   * other process takes them too), their records handed to `take` (which keeps them in this journal), then the
   * files go. Records of a file cut mid-line (the process died writing it) are kept up to the last whole line.
   */
  recover(take: (json: string) => void): number {
    let recovered = 0;
    for (const name of readdirSync(this.dir)) {
      const pid = Number(name.split('-')[0]);
      if (!name.endsWith('.jsonl') || name.startsWith(this.prefix) || !Number.isInteger(pid) || alive(pid)) continue;
      // Renamed into this process's name: if it dies before the records are written, the next one takes them.
      const claimed = path.join(this.dir, `${this.prefix}-c${(this.opened += 1)}.jsonl`);
      try {
        renameSync(path.join(this.dir, name), claimed);
      } catch {
        continue; // another process took it first
      }
      const lines = readFileSync(claimed, 'utf8').split('\n');
      // A last line without its newline was cut by the death: its write never finished.
      for (const line of lines.slice(0, -1)) if (line) (take(line), (recovered += 1));
      const current = this.segments.at(-1)!;
      fsyncSync(current.fd);
      unlinkSync(claimed);
    }
    if (recovered) this.log.warn({ records: recovered, dir: this.dir }, 'usage records a stopped process had answered but not written: writing them now');
    return recovered;
  }

  /** At a clean stop, with every record written: the files go. */
  close(): void {
    for (const segment of this.segments.splice(0)) {
      quietly(() => closeSync(segment.fd));
      if (segment.records <= this.committedAhead) quietly(() => unlinkSync(segment.file));
      this.committedAhead -= Math.min(this.committedAhead, segment.records);
    }
  }

  private openSegment(): Segment {
    const file = path.join(this.dir, `${this.prefix}-${(this.opened += 1)}.jsonl`);
    return { file, fd: openSync(file, 'a'), records: 0 };
  }
}

/** A file the journal no longer needs that is gone already (its directory removed) is no failure. */
function quietly(work: () => void): void {
  try {
    work();
  } catch {
    // Nothing to keep: the file held only written records.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
