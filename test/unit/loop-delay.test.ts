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

describe('event-loop delay while serving', () => {
  it('samples nothing while idle, so an idle process has no timer waking it', async () => {
    const monitor = new LoopDelayWhileServing();
    await sleep(60);
    expect(monitor.histogram.count).toBe(0);
  });

  it('records how late its timer fires while a request is in flight, in ns past the due time', async () => {
    const monitor = new LoopDelayWhileServing();
    monitor.started();
    await sleep(45); // about four samples before the block
    block(40);
    await sleep(25);
    monitor.ended();
    expect(monitor.histogram.count).toBeGreaterThanOrEqual(4);
    // The blocked period shows as one sample at least 25 ms late (its due time fell inside the 40 ms block).
    expect(monitor.histogram.max).toBeGreaterThanOrEqual(25e6);
    expect(monitor.histogram.max).toBeLessThan(200e6);
    // The on-time ones count from their due time: less than the 10 ms period that the whole interval would be.
    expect(monitor.histogram.min).toBeLessThan(10e6);
  });

  it('keeps sampling across back-to-back requests and stops one quiet period after the last', async () => {
    const monitor = new LoopDelayWhileServing();
    // Requests of about a millisecond, back to back for 100 ms: none lasts a period, yet it samples.
    const until = performance.now() + 100;
    while (performance.now() < until) {
      monitor.started();
      await sleep(1);
      monitor.ended();
    }
    const sampled = monitor.histogram.count;
    expect(sampled).toBeGreaterThanOrEqual(3);
    await sleep(80);
    const afterQuiet = monitor.histogram.count;
    expect(afterQuiet - sampled).toBeLessThanOrEqual(2);
    await sleep(60);
    expect(monitor.histogram.count).toBe(afterQuiet);
  });
});
