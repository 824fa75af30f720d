/**
 * Fixed-window attempt counters kept in process memory (one process by default; the scale-out
 * capability moves them to Redis). Entries expire with their window, so memory stays bounded by
 * the number of distinct keys seen in one window.
 */
export class WindowCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait when `key` is at its limit, else 0. */
  retryAfterSeconds(key: string): number {
    const entry = this.current(key);
    if (!entry || entry.count < this.limit) return 0;
    return Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000));
  }

  hit(key: string): void {
    const entry = this.current(key);
    if (entry) entry.count += 1;
    else this.windows.set(key, { count: 1, resetAt: this.now() + this.windowMs });
    if (this.windows.size > 10_000) this.sweep();
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private current(key: string) {
    const entry = this.windows.get(key);
    if (entry && entry.resetAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.windows) if (entry.resetAt <= now) this.windows.delete(key);
  }
}
