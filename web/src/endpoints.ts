/** The gateway's GraphQL endpoint on this origin, over HTTP and over graphql-ws (same path, same cookie). */
export const GRAPHQL_URL = '/graphql';
export const GRAPHQL_WS_URL = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${GRAPHQL_URL}`;
