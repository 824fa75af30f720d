import { useCallback, useEffect, useMemo, useState } from 'react';
import { useClient, useSubscription, type AnyVariables } from 'urql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { describeError, onSocketConnected, type ApiIssue, type ApiProblem } from '../../client.js';
import { graphql } from '../../gql/index.js';
import type { RouteHealthState } from '../../gql/graphql.js';
import { useI18n } from '../../i18n.js';
import { issueText, ProblemText } from '../../ui.js';

/**
 * What the upstreams page is built from: routing's live state per credential, mutations that keep nothing of
 * what they sent, and the API's field issues found by their whole path.
 */

const HealthDocument = graphql(`
  query AdminCredentialHealth {
    adminUpstreamHealth {
      upstreamId
      credentialId
      label
      state
      until
      inFlight
      lastFailureAt
    }
  }
`);
const HealthChangedDocument = graphql(`
  subscription AdminUpstreamHealthLive {
    upstreamHealthChanged {
      upstreamId
      credentialId
      state
      until
      at
    }
  }
`);

export interface CredentialState {
  state: RouteHealthState;
  until: string | null;
  inFlight: number;
  lastFailureAt: string | null;
}

type Change = { state: RouteHealthState; until: string | null; at: string; receivedAt: number };

type CredentialRef = { routingId: string };

/** The id routing knows a credential by (its health and the test action use it), as the API answers it. */
export function routingCredentialId(credential: CredentialRef): string {
  return credential.routingId;
}

/** A credential's key in the health states: `upstream/routing id`. */
export function routingKey(upstreamId: string, credential: CredentialRef): string {
  return `${upstreamId}/${routingCredentialId(credential)}`;
}

/**
 * Routing's state of every credential, live: `adminUpstreamHealth` first, then each `upstreamHealthChanged`
 * as it comes. The state is read again whenever the socket (re)connects (changes sent while it was down are
 * lost) and a moment after a change (for the requests in flight and the last failure, which changes do not carry).
 * A change received after a read started wins over that read.
 */
export function useLiveHealth(): { states: Record<string, CredentialState>; reload(): Promise<void> } {
  const client = useClient();
  const [base, setBase] = useState<{ rows: Record<string, CredentialState>; startedAt: number }>({ rows: {}, startedAt: 0 });
  const reload = useCallback(async () => {
    const startedAt = performance.now();
    const result = await client.query(HealthDocument, {}, { requestPolicy: 'network-only' }).toPromise();
    if (!result.data) return;
    const rows: Record<string, CredentialState> = {};
    for (const row of result.data.adminUpstreamHealth) rows[`${row.upstreamId}/${row.credentialId}`] = { state: row.state, until: row.until ?? null, inFlight: row.inFlight, lastFailureAt: row.lastFailureAt ?? null };
    setBase((previous) => (previous.startedAt > startedAt ? previous : { rows, startedAt }));
  }, [client]);
  useEffect(() => {
    void reload();
    return onSocketConnected(() => void reload());
  }, [reload]);
  const [live] = useSubscription({ query: HealthChangedDocument }, (known: Record<string, Change> = {}, event) => {
    const change = event.upstreamHealthChanged;
    return { ...known, [`${change.upstreamId}/${change.credentialId}`]: { state: change.state, until: change.until ?? null, at: change.at, receivedAt: performance.now() } };
  });
  useEffect(() => {
    if (!live.data) return;
    const timer = setTimeout(() => void reload(), 1_000);
    return () => clearTimeout(timer);
  }, [live.data, reload]);
  const states = useMemo(() => {
    const merged: Record<string, CredentialState> = { ...base.rows };
    for (const [key, change] of Object.entries(live.data ?? {})) {
      if (change.receivedAt < base.startedAt) continue;
      const known = merged[key];
      merged[key] = { inFlight: known?.inFlight ?? 0, state: change.state, until: change.until, lastFailureAt: known?.lastFailureAt ?? null };
    }
    return merged;
  }, [base, live.data]);
  return { states, reload };
}

/**
 * A mutation whose variables are kept nowhere: urql's `useMutation` holds the last operation (with its
 * variables, a secret among them) in React state; this keeps only whether it runs and its error.
 */
export function useAction<R, V extends AnyVariables>(document: TypedDocumentNode<R, V>): [{ fetching: boolean; problem: ApiProblem | null }, (variables: V) => Promise<R | null>, () => void] {
  const client = useClient();
  const [state, setState] = useState<{ fetching: boolean; problem: ApiProblem | null }>({ fetching: false, problem: null });
  const run = useCallback(
    async (variables: V) => {
      setState({ fetching: true, problem: null });
      const result = await client.mutation(document, variables).toPromise();
      setState({ fetching: false, problem: describeError(result.error) });
      return result.data ?? null;
    },
    [client, document],
  );
  const clear = useCallback(() => setState({ fetching: false, problem: null }), []);
  return [state, run, clear];
}

/** The issue of one field by its whole path (`routes.2.group`), or a local one the form found first. */
export function issueAt(problem: ApiProblem | null, local: Record<string, ApiIssue>, path: string): ApiIssue | undefined {
  return local[path] ?? problem?.paths[path];
}

/**
 * The API's problem over a form: its sentence, and the issues no field of the form shows (each with the
 * field it names), so nothing the API said is lost.
 */
export function FormProblem({ problem, shown }: { problem: ApiProblem | null; shown: (path: string) => boolean }) {
  const { t } = useI18n();
  if (!problem) return null;
  const others = Object.entries(problem.paths).filter(([path]) => !shown(path));
  return (
    <>
      <ProblemText problem={problem} />
      {others.length > 0 && (
        <ul className="issues">
          {others.map(([path, issue]) => (
            <li key={path}>
              <code>{path || '—'}</code>: {issueText(issue, t)}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A local issue of a number field (same shape as the API's, so it is shown the same way). */
function localIssue(path: string, type: 'int_parsing' | 'number_type', msg: string): ApiIssue {
  return { loc: path.split('.'), type, msg };
}

/**
 * Reads the number fields of a form: empty is "not given" (undefined), else a whole number or any number;
 * what is not one becomes an issue under its field before anything is sent.
 */
export class NumberReader {
  readonly issues: Record<string, ApiIssue> = {};

  int(path: string, text: string): number | undefined {
    if (!text.trim()) return undefined;
    const value = Number(text.trim());
    if (!Number.isSafeInteger(value)) this.issues[path] = localIssue(path, 'int_parsing', 'Input should be a valid integer');
    return value;
  }

  float(path: string, text: string): number | undefined {
    if (!text.trim()) return undefined;
    const value = Number(text.trim());
    if (!Number.isFinite(value)) this.issues[path] = localIssue(path, 'number_type', 'Input should be a valid number');
    return value;
  }

  get ok(): boolean {
    return Object.keys(this.issues).length === 0;
  }
}

/** A decimal string as the API takes it (null when empty). */
export function decimalOrNull(text: string): string | null {
  return text.trim() ? text.trim() : null;
}
