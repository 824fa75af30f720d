import { useCallback, useEffect, useRef, useState } from 'react';
import { onSocketConnected } from './client.js';
import { addDecimal } from './decimal.js';

/**
 * The live pages' shared rules. A page shows a snapshot (a query) and moves it with subscription events; since
 * events sent while the socket was down (or before it first opened) are lost, the snapshot is read again each
 * time the socket (re)connects.
 */

/** Calls the latest `callback` on every socket (re)connect while the page is mounted. */
export function useOnReconnect(callback: () => void): void {
  const latest = useRef(callback);
  latest.current = callback;
  useEffect(() => onSocketConnected(() => latest.current()), []);
}

/** A snapshot's parameters, made by `make` at mount, again on every socket (re)connect and whenever the page calls `renew`. */
export function useRenewed<T>(make: () => T): { value: T; renew(): void } {
  const [value, setValue] = useState(make);
  const latest = useRef(make);
  latest.current = make;
  const renew = useCallback(() => setValue(latest.current()), []);
  useOnReconnect(renew);
  return { value, renew };
}

/** `renew` once at `at` (a day's end: the page's "today" moves on with the clock, not with the next event). */
export function useRenewAt(at: number, renew: () => void): void {
  useEffect(() => {
    const timer = setTimeout(renew, Math.max(0, at - Date.now()) + 500);
    return () => clearTimeout(timer);
  }, [at, renew]);
}

/** A billed request as the usage subscriptions deliver it (the fields the totals need). */
export interface LiveRequest {
  id: string;
  createdAt: string;
  amountUsd: string;
  promptTokens?: number | null;
  completionTokens?: number | null;
}

/** `known` plus the `arriving` events it does not hold yet (by id), newest first, at most `max`. */
export function mergeById<T extends { id: string; createdAt: string }>(known: T[], arriving: readonly T[], max = 5_000): T[] {
  const ids = new Set(known.map((event) => event.id));
  const fresh = arriving.filter((event) => !ids.has(event.id));
  if (!fresh.length) return known;
  return [...fresh, ...known].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt)).slice(0, max);
}

export interface Totals {
  requests: number;
  spendUsd: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * A snapshot's totals (over requests created before `since`, the snapshot's `to`) plus the live requests created
 * in [since, until): a request is counted once, by the snapshot or live, never by both (the usage queries' `to` is
 * exclusive on created_at). Requests created before `since` but billed after the snapshot are not in either:
 * `useLiveRequests` renews the snapshot when one arrives.
 */
export function withLive<T extends Totals>(base: T, live: readonly LiveRequest[], since: number, until: number): T {
  const counted = live.filter((event) => {
    const at = Date.parse(event.createdAt);
    return at >= since && at < until;
  });
  let spend = base.spendUsd;
  for (const event of counted) spend = addDecimal(spend, event.amountUsd) ?? spend;
  return {
    ...base,
    requests: base.requests + counted.length,
    spendUsd: spend,
    inputTokens: base.inputTokens + counted.reduce((sum, event) => sum + (event.promptTokens ?? 0), 0),
    outputTokens: base.outputTokens + counted.reduce((sum, event) => sum + (event.completionTokens ?? 0), 0),
  };
}

/**
 * Keeps the live requests' reducer honest: requests created before the snapshot's `since` are dropped (the snapshot
 * may or may not hold them) and the snapshot is renewed, at most once a second, to count them exactly; it is renewed
 * too when many requests have piled up since it (so the list stays short on a page left open under load).
 */
export function useLiveRequests(since: number | null, renew: () => void): (known: LiveRequest[] | undefined, arriving: readonly LiveRequest[]) => LiveRequest[] {
  const sinceRef = useRef(since);
  sinceRef.current = since;
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (pending.current && clearTimeout(pending.current)), []);
  return useCallback(
    (known = [], arriving) => {
      const from = sinceRef.current;
      if (from === null) return mergeById(known, arriving);
      const merged = mergeById(
        known.filter((event) => Date.parse(event.createdAt) >= from),
        arriving.filter((event) => Date.parse(event.createdAt) >= from),
      );
      const early = arriving.some((event) => Date.parse(event.createdAt) < from);
      if ((early || merged.length >= 2_000) && !pending.current) {
        pending.current = setTimeout(() => {
          pending.current = null;
          renew();
        }, 1_000);
      }
      return merged;
    },
    [renew],
  );
}
