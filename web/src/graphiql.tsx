import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import 'graphiql/graphiql.css';
import { createClient } from 'graphql-ws';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { GRAPHQL_URL, GRAPHQL_WS_URL } from './endpoints.js';
import './graphiql.css';

/**
 * The GraphQL explorer served at /graphql to a browser where introspection is on: GraphiQL bundled with
 * the cabinet's build (no CDN), on this origin, signed in by the cabinet's session cookie, subscriptions
 * over graphql-ws.
 */
const fetcher = createGraphiQLFetcher({
  url: GRAPHQL_URL,
  wsClient: createClient({ url: GRAPHQL_WS_URL, lazy: true }),
  fetch: (input, init) => fetch(input, { ...init, credentials: 'same-origin' }),
});

const FIRST_QUERY = `# Uses your cabinet session: sign in at /app first.
# Ctrl-Enter runs, Ctrl-Space completes,
# the Docs panel lists the schema.
query Me {
  me {
    userId
    username
    balanceUsd
  }
}
`;

createRoot(document.getElementById('graphiql')!).render(
  <StrictMode>
    <GraphiQL fetcher={fetcher} defaultQuery={FIRST_QUERY} />
  </StrictMode>,
);
