import type { KeyEvent } from './account-event-hub.js';

/** How often at most a key's refusals by one limit become an event while they go on. */
const COALESCE_MS = 1_000;

/** The limits a refusal names (src/inference/limits.ts reasons), as key events call them. */
const LIMIT_OF_REASON: Record<string, string> = {
  rate_limited: 'requests_per_minute',
  concurrency_limited: 'key_concurrency',
  account_concurrency_limited: 'account_concurrency',
  capacity_limited: 'gateway_concurrency',
};

/**
 * A key's requests refused by a limit, as `limit_refused` key events: counted as they happen (a refusal is the
 * only trace of one: nothing is committed for it) and sent at most once a second per key and limit, with how
 * many were refused since the previous event. Successful requests never come here.
 */
export class LimitRefusals {
  private readonly pending = new Map<string, { userId: string; keyId: string; limit: string; refused: number }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly publish: (userId: string, event: KeyEvent) => void) {}

  note(userId: string, keyId: string, reason: string): void {
    const limit = LIMIT_OF_REASON[reason];
    if (!limit) return;
    const id = `${keyId}:${limit}`;
    const entry = this.pending.get(id);
    if (entry) entry.refused++;
    else this.pending.set(id, { userId, keyId, limit, refused: 1 });
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), COALESCE_MS);
      this.timer.unref();
    }
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const at = new Date();
    for (const { userId, keyId, limit, refused } of this.pending.values()) this.publish(userId, { kind: 'key', type: 'limit_refused', keyId, limit, refused, at });
    this.pending.clear();
  }
}
