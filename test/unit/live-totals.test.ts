import { describe, expect, it } from 'vitest';
import { mergeById, withLive, type LiveRequest } from '../../web/src/live-totals.js';

const DAY = 86_400_000;
const midnight = Date.parse('2026-03-01T00:00:00.000Z');
const request = (id: string, at: number, amountUsd = '0.0125'): LiveRequest => ({ id, createdAt: new Date(at).toISOString(), amountUsd, promptTokens: 10, completionTokens: 3 });
const zero = { requests: 0, spendUsd: '0', inputTokens: 0, outputTokens: 0 };

describe('the live totals of the cabinet (web/src/live-totals.ts)', () => {
  it('adds only the requests created after the snapshot and within the period, exactly', () => {
    const since = midnight - 2_000; // yesterday's snapshot, read two seconds before midnight
    const live = [request('a', since - 1), request('b', since), request('c', midnight - 1, '0.1'), request('d', midnight)];
    // Yesterday: a is the snapshot's (or a renewed one's), d belongs to the new day.
    expect(withLive({ ...zero, requests: 4, spendUsd: '1.5' }, live, since, midnight)).toEqual({ requests: 6, spendUsd: '1.6125', inputTokens: 20, outputTokens: 6 });
    // The new day's snapshot, read just after midnight: the batch from before midnight does not count into it.
    expect(withLive(zero, live, midnight + 500, midnight + DAY)).toEqual(zero);
    expect(withLive(zero, [...live, request('e', midnight + 600)], midnight + 500, midnight + DAY)).toMatchObject({ requests: 1, spendUsd: '0.0125' });
  });

  it('merges events by id, newest first, keeping the list bounded', () => {
    const first = mergeById([], [request('a', 1), request('b', 3)]);
    expect(mergeById(first, [request('b', 3), request('c', 2)]).map((event) => event.id)).toEqual(['b', 'c', 'a']);
    expect(mergeById(first, [request('b', 3)])).toBe(first);
    expect(mergeById(first, [request('z', 9)], 2).map((event) => event.id)).toEqual(['z', 'b']);
  });
});
