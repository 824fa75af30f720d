import { addDecimal } from './decimal.js';

/** The live pages' arithmetic (no React, no DOM): merging events by id and adding them to a snapshot's totals. */

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
