import { describe, expect, it, vi } from 'vitest';
import { isRequestId, newTimeOrderedId, requestIdFrom } from '../../src/shared/ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit millisecond time at the head of a UUIDv7. */
const timeOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('time-ordered ids', () => {
  it('are UUIDv7: the time in milliseconds, version 7, the RFC 9562 variant, and random bits', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, newTimeOrderedId);
    const after = Date.now();
    for (const id of ids) {
      expect(id).toMatch(UUID_V7);
      expect(timeOf(id)).toBeGreaterThanOrEqual(before);
      expect(timeOf(id)).toBeLessThanOrEqual(after);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // Every random digit varies (the version and the variant's top bits are the only fixed ones).
    const digits = ids.map((id) => id.replaceAll('-', '').slice(13));
    for (let at = 0; at < 19; at++) expect(new Set(digits.map((d) => d[at])).size, `digit ${13 + at}`).toBeGreaterThan(at === 3 ? 3 : 15);
  });

  it('sort by time as text, across the random draws of one millisecond and the next', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(1_795_000_000_000);
      const first = Array.from({ length: 300 }, newTimeOrderedId);
      vi.setSystemTime(1_795_000_000_001);
      const second = Array.from({ length: 300 }, newTimeOrderedId);
      expect(Math.max(...first.map(timeOf))).toBeLessThan(Math.min(...second.map(timeOf)));
      expect([...first, ...second].every((id, i, all) => i === 0 || timeOf(all[i - 1]!) <= timeOf(id))).toBe(true);
      const maxFirst = first.reduce((a, b) => (a > b ? a : b));
      const minSecond = second.reduce((a, b) => (a < b ? a : b));
      expect(maxFirst < minSecond).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('request ids', () => {
  it('keeps a safe caller id and mints time-ordered ones otherwise', () => {
    expect(requestIdFrom('client-trace-0001')).toBe('client-trace-0001');
    expect(requestIdFrom('bad id with spaces')).toMatch(/^req_/);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(1_795_000_000_000);
      const earlier = Array.from({ length: 200 }, () => requestIdFrom(undefined));
      vi.setSystemTime(1_795_000_000_001);
      const later = Array.from({ length: 200 }, () => requestIdFrom(undefined));
      for (const id of [...earlier, ...later]) {
        expect(id).toMatch(/^req_[0-9a-f]{12}[A-Za-z0-9_-]{12}$/);
        expect(isRequestId(id)).toBe(true);
      }
      // As PostgreSQL compares text in the C collation: byte order.
      expect(earlier.every((a) => later.every((b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0))).toBe(true);
      expect(new Set([...earlier, ...later]).size).toBe(400);
    } finally {
      vi.useRealTimers();
    }
  });
});
