import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LoopDelayWhileServing } from '../../src/metrics.js';

/** Holds the event loop for `ms`, as a long synchronous task would. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

/** Requests one after another for `forMs`: each lasts `lastingMs`, then `gapMs` pass before the next. */
async function serve(monitor: LoopDelayWhileServing, forMs: number, lastingMs: number, gapMs: number): Promise<void> {
  const until = performance.now() + forMs;
  while (performance.now() < until) {
    monitor.started();
    if (lastingMs) await sleep(lastingMs);
    monitor.ended();
    if (gapMs) await sleep(gapMs);
  }
}

const PERIODS = { denseMs: 10, sparseMs: 50 };

describe('event-loop delay while serving', () => {
  it('samples nothing while idle, so an idle process has no timer waking it', async () => {
    const monitor = new LoopDelayWhileServing();
    await sleep(60);
    expect(monitor.histogram.count).toBe(0);
  });

  it('records how late its timer fires while a request is in flight, in ns past the due time', async () => {
    const monitor = new LoopDelayWhileServing(PERIODS);
    monitor.started();
    await sleep(120); // two samples on time, at the sparse period (one request started)
    block(80); // a due time falls inside: that sample is at least 30 ms late
    await sleep(30);
    monitor.ended();
    expect(monitor.histogram.count).toBeGreaterThanOrEqual(3);
    expect(monitor.histogram.max).toBeGreaterThanOrEqual(25e6);
    expect(monitor.histogram.max).toBeLessThan(200e6);
    // The on-time ones count from their due time: less than the 10 ms the shortest whole interval would be.
    expect(monitor.histogram.min).toBeLessThan(10e6);
  });

  it('samples every sparse period while requests are sparse: each sample is then a wakeup of its own', async () => {
    const monitor = new LoopDelayWhileServing(PERIODS);
    // A short request every 20 ms for 300 ms (50 a second): at the dense period this would be ~30 samples.
    await serve(monitor, 300, 0, 20);
    expect(monitor.histogram.count).toBeGreaterThanOrEqual(3);
    expect(monitor.histogram.count).toBeLessThanOrEqual(8);
  });

  it('samples every dense period across back-to-back requests and stops one quiet period after the last', async () => {
    const monitor = new LoopDelayWhileServing(PERIODS);
    // Requests of about a millisecond, back to back for 100 ms: none lasts a period, yet after its first (sparse)
    // sample it samples every 10 ms (at the sparse period alone it would have two samples).
    await serve(monitor, 100, 1, 0);
    const sampled = monitor.histogram.count;
    expect(sampled).toBeGreaterThanOrEqual(3);
    await sleep(80);
    const afterQuiet = monitor.histogram.count;
    expect(afterQuiet - sampled).toBeLessThanOrEqual(2);
    await sleep(60);
    expect(monitor.histogram.count).toBe(afterQuiet);
  });
});
