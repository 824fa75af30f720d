import { cacheExchange, Client, fetchExchange, subscriptionExchange, type CombinedError } from '@urql/core';
import { createClient as createWsClient } from 'graphql-ws';
import { GRAPHQL_URL, GRAPHQL_WS_URL } from './endpoints.js';

/**
 * One GraphQL client for the whole cabinet: queries and mutations over HTTP, subscriptions over
 * graphql-ws, both on this origin, both authenticated by the HttpOnly session cookie (the browser sends
 * it; the page never sees it).
 */
const wsClient = createWsClient({
  url: GRAPHQL_WS_URL,
  lazy: true,
  retryAttempts: 20,
  // A socket whose session ended (sign-out, expiry) is closed with 4401: reconnecting as nobody is pointless.
  shouldRetry: (event) => !(event && typeof event === 'object' && 'code' in event && (event as CloseEvent).code === 4401),
});

export const client = new Client({
  url: GRAPHQL_URL,
  exchanges: [
    cacheExchange,
    fetchExchange,
    subscriptionExchange({
      forwardSubscription: (request) => ({
        subscribe: (sink) => ({ unsubscribe: wsClient.subscribe({ ...request, query: request.query ?? '' }, sink) }),
      }),
    }),
  ],
  requestPolicy: 'cache-and-network',
  fetchOptions: { credentials: 'same-origin', headers: { 'content-type': 'application/json' } },
});

const connectedListeners = new Set<() => void>();
wsClient.on('connected', () => {
  for (const listener of connectedListeners) listener();
});

/**
 * Calls `listener` each time the subscription socket (re)connects: a page that shows live state reloads it
 * then, since events sent while the socket was down (or before it first opened) are lost. Returns the unsubscribe.
 */
export function onSocketConnected(listener: () => void): () => void {
  connectedListeners.add(listener);
  return () => void connectedListeners.delete(listener);
}

/** Ends every socket (sign-out): the next subscription connects with the new cookie. */
export function restartSubscriptions(): void {
  wsClient.terminate();
}

export interface ApiIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** What an API error means for a form: its code, a message, and field issues keyed by the last loc part. */
export interface ApiProblem {
  /** The GraphQL code (UNAUTHENTICATED, BAD_USER_INPUT, ...), or `network`. */
  code: string;
  /** The domain's reason (invalid_credentials, email_not_verified, ...), when it gives one. */
  reason: string | null;
  message: string;
  /** Field issues keyed by the last part of their `loc` (shown in the reader's language by the field: ui.tsx issueText). */
  fields: Record<string, ApiIssue>;
  /** The same issues keyed by their whole `loc` joined with dots (`credentials.1.secret`), for forms with repeated rows. */
  paths: Record<string, ApiIssue>;
}

/** What an API error means for a form. */
export function describeError(error: CombinedError | undefined | null): ApiProblem | null {
  if (!error) return null;
  const first = error.graphQLErrors[0];
  if (!first) return { code: 'network', reason: null, message: error.networkError?.message ?? error.message, fields: {}, paths: {} };
  const extensions = first.extensions as { code?: string; reason?: string; issues?: ApiIssue[] };
  const fields: Record<string, ApiIssue> = {};
  const paths: Record<string, ApiIssue> = {};
  for (const issue of extensions.issues ?? []) {
    fields[String(issue.loc[issue.loc.length - 1])] ??= issue;
    paths[issue.loc.join('.')] ??= issue;
  }
  return { code: String(extensions.code ?? 'error'), reason: extensions.reason ?? null, message: first.message, fields, paths };
}
