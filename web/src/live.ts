import { useCallback, useEffect, useRef, useState } from 'react';
import { onSocketConnected } from './client.js';
import { mergeById, type LiveRequest } from './live-totals.js';

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

/**
 * `callback` at most once per `ms`, the last call of a burst always run (a page that refetches on every event of a
 * busy organization reads once per burst, not once per event). Pending calls end with the page.
 */
export function useThrottled(callback: () => void, ms = 500): () => void {
  const latest = useRef(callback);
  latest.current = callback;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      latest.current();
    }, ms);
  }, [ms]);
}
