import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import { getOperationAST, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { formatGraphQLError } from '../resolvers/errors.js';
import { operationCostError } from '../resolvers/limits.js';
import type { Config } from './config.js';
import { createRequestContext, isCrossSiteWrite, readCookie, sessionCookieName, type RequestContext } from './context.js';
import type { Services } from './services.js';
import type { Actor } from './shared/actor.js';
import { requestIdFrom } from './shared/ids.js';
import { jsonNestsDeeper, MAX_JSON_DEPTH } from './shared/json-depth.js';
import type { Logger } from './shared/logging.js';
import { Topics, type PubSub } from './shared/pubsub.js';

/**
 * Close codes (graphql-ws reserves 4400-4499 for such reasons; clients see them in `CloseEvent.code`).
 * 4400: a message nested too deeply. 4401: the socket's session ended (signed out, expired, idle). 4403: a credential was refused.
 * 4408: an anonymous socket that did not subscribe in time, or an idle one. 4429: too many sockets.
 */
export const WS_CLOSE = { badMessage: 4400, sessionEnded: 4401, refused: 4403, timeout: 4408, tooMany: 4429 } as const;

/** How long a signed-out socket stays open to deliver the SIGNED_OUT event of its own subscription. */
const SIGNED_OUT_CLOSE_DELAY_MS = 250;

export interface GraphqlWsDeps {
  server: Server;
  schema: GraphQLSchema;
  validationRules: ValidationRule[];
  formatError: ReturnType<typeof formatGraphQLError>;
  config: Config;
  services: Services;
  pubsub: PubSub;
  orm: MikroORM;
  log: Logger;
  /** The client address of an upgrade request, as express computes it (honours `TRUST_PROXY`). */
  clientAddressOf(request: IncomingMessage): string;
}

/** One open socket: who it runs as, and what keeps it open. */
interface Connection {
  socket: WebSocket;
  address: string;
  actor: Actor | null;
  /** Operations running now (a subscription stays here until it completes). */
  operations: Set<string>;
  /** The last message from the client, or the end of its last operation. */
  lastActivity: number;
  /** Since when an anonymous socket has held no subscription. */
  anonymousSince: number;
  /** When a signed-in socket checks its session again (expiry and idle end it without any event). */
  nextRecheck: number;
  timer: NodeJS.Timeout | null;
  /** Signed out: closing, and refusing every operation meanwhile. */
  signedOut: boolean;
  /** Ends the session-event listener. */
  stopListening: (() => void) | null;
}

/**
 * GraphQL over graphql-ws, with the same schema, validation and error formatting as over HTTP, and
 * the limits a long-lived connection needs:
 * - every operation runs as a session that is valid now (checked per operation; a signed-out session's
 *   sockets are closed at once through the session events, across processes when pub/sub is shared, and
 *   every socket re-checks its session every `WS_SESSION_RECHECK_SECONDS` for expiry);
 * - at most `WS_MAX_PER_ACCOUNT` sockets per account and `WS_MAX_PER_ADDRESS` per client address (per process);
 * - an anonymous socket must hold a subscription (within `WS_ANONYMOUS_SUBSCRIBE_SECONDS` of connecting or
 *   of its last subscription ending), and a socket with nothing running is closed after `WS_IDLE_SECONDS`.
 */
export function serveGraphqlWs(deps: GraphqlWsDeps): { dispose(): Promise<void> } {
  const { config, services, log } = deps;
  const limits = config.websocket;
  // Upgrades are handed over by hand rather than with `server`: attached, ws re-emits the HTTP server's errors and
  // graphql-ws prints them with a stack (a port already in use showed as "Internal error emitted on the WebSocket
  // server" above our own one-line message). Other paths are refused by handleUpgrade (path), as before.
  const wsServer = new WebSocketServer({ noServer: true, path: '/graphql' });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit('connection', ws, request));
  deps.server.on('upgrade', onUpgrade);
  const connections = new WeakMap<object, Connection>();
  const open = new Set<Connection>();
  const perAddress = new Map<string, number>();
  const perAccount = new Map<string, number>();
  const bump = (counts: Map<string, number>, key: string, by: number) => {
    const n = (counts.get(key) ?? 0) + by;
    if (n > 0) counts.set(key, n);
    else counts.delete(key);
  };

  const close = (conn: Connection, code: number, reason: string) => {
    if (conn.socket.readyState === conn.socket.OPEN || conn.socket.readyState === conn.socket.CONNECTING) conn.socket.close(code, reason);
  };

  /** Re-arms the one timer a connection has, for whichever of its deadlines comes first. */
  const schedule = (conn: Connection) => {
    if (conn.timer) clearTimeout(conn.timer);
    conn.timer = null;
    const idle = conn.operations.size === 0;
    const next = Math.min(
      idle ? conn.lastActivity + limits.idleMs : Infinity,
      idle && !conn.actor ? conn.anonymousSince + limits.anonymousSubscribeMs : Infinity,
      conn.actor ? conn.nextRecheck : Infinity,
    );
    if (next === Infinity) return;
    conn.timer = setTimeout(() => tick(conn), Math.max(0, next - Date.now()) + 5);
    conn.timer.unref();
  };

  /** A deadline may have passed: close, re-check the session, or wait for the next one. */
  const tick = (conn: Connection) => {
    const now = Date.now();
    if (conn.operations.size === 0) {
      if (now >= conn.lastActivity + limits.idleMs) return close(conn, WS_CLOSE.timeout, 'Idle timeout');
      if (!conn.actor && now >= conn.anonymousSince + limits.anonymousSubscribeMs) return close(conn, WS_CLOSE.timeout, 'Subscribe within the time allowed, or sign in');
    }
    if (conn.actor && now >= conn.nextRecheck) {
      conn.nextRecheck = now + limits.sessionRecheckMs;
      return void sessionValid(conn).then((valid) => valid && schedule(conn));
    }
    schedule(conn);
  };

  /** Whether the connection's session is valid now; closes the socket (4401) when it is not. */
  const sessionValid = async (conn: Connection): Promise<boolean> => {
    if (!conn.actor) return true;
    if (conn.signedOut) return false;
    const actor = await services.accounts.sessionActor(conn.actor.sessionId).catch((error: unknown) => {
      log.warn({ err: error }, 'graphql-ws session check failed');
      return undefined;
    });
    // A failed check (the database away) keeps the socket but refuses the operation.
    if (actor === undefined) return false;
    if (!actor) {
      close(conn, WS_CLOSE.sessionEnded, 'Session ended');
      return false;
    }
    // Admin rights follow the account as it is now.
    conn.actor = actor;
    return true;
  };

  /** Closes the socket as soon as its session is signed out (in this process or, with shared pub/sub, any). */
  const listenForSignOut = (conn: Connection, actor: Actor) => {
    const events = deps.pubsub.subscribe(Topics.SessionEvents, actor.userId);
    conn.stopListening = () => void events.return?.();
    void (async () => {
      for await (const event of events) {
        if (event.kind !== 'signed_out' || event.sessionId !== actor.sessionId) continue;
        // Refused from now on; closed a moment later, so a `sessionEvents` subscription on this very socket
        // (the cabinet's) delivers SIGNED_OUT before the close.
        conn.signedOut = true;
        setTimeout(() => close(conn, WS_CLOSE.sessionEnded, 'Session ended'), SIGNED_OUT_CLOSE_DELAY_MS).unref();
      }
    })().catch(() => undefined);
  };

  // Registered before graphql-ws's own listener: a socket over the address cap is closed before it is served.
  wsServer.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const address = deps.clientAddressOf(request);
    const now = Date.now();
    const conn: Connection = { socket, address, actor: null, operations: new Set(), lastActivity: now, anonymousSince: now, nextRecheck: now + limits.sessionRecheckMs, timer: null, stopListening: null, signedOut: false };
    connections.set(socket, conn);
    if ((perAddress.get(address) ?? 0) >= limits.maxPerAddress) return close(conn, WS_CLOSE.tooMany, 'Too many connections from this address');
    bump(perAddress, address, 1);
    open.add(conn);
    socket.on('message', (data) => {
      conn.lastActivity = Date.now();
      // The same nesting bound as every other JSON surface (graphql-ws parses the message after this listener).
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      if (jsonNestsDeeper(bytes)) close(conn, WS_CLOSE.badMessage, `Messages may nest at most ${MAX_JSON_DEPTH} levels deep`);
    });
    socket.once('close', () => {
      open.delete(conn);
      bump(perAddress, address, -1);
      if (conn.actor) bump(perAccount, conn.actor.userId, -1);
      if (conn.timer) clearTimeout(conn.timer);
      conn.stopListening?.();
    });
    schedule(conn);
  });

  const connectionOf = (extra: { socket: WebSocket }) => connections.get(extra.socket)!;

  const cleanup = useServer<Record<string, unknown> | undefined, { socket: WebSocket; request: IncomingMessage }>(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const conn = connectionOf(ctx.extra);
        const actor = await websocketActor(ctx.extra.request, ctx.connectionParams, config, services);
        if (actor === 'refused') return false;
        if (actor) {
          if ((perAccount.get(actor.userId) ?? 0) >= limits.maxPerAccount) {
            close(conn, WS_CLOSE.tooMany, 'Too many connections for this account');
            return false;
          }
          bump(perAccount, actor.userId, 1);
          conn.actor = actor;
          listenForSignOut(conn, actor);
        }
        schedule(conn);
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const conn = connectionOf(ctx.extra);
        if (!(await sessionValid(conn))) return [new GraphQLError('Your session has ended; sign in again', { extensions: { code: 'UNAUTHENTICATED' } })];
        const args = prepareOperation(deps, payload);
        if (!('document' in args)) return args;
        if (conn.actor || getOperationAST(args.document, args.operationName)?.operation === 'subscription') {
          conn.operations.add(id);
          schedule(conn);
        }
        return args;
      },
      onComplete: (ctx, id) => {
        const conn = connectionOf(ctx.extra);
        if (conn.operations.delete(id)) {
          conn.lastActivity = Date.now();
          if (conn.operations.size === 0) conn.anonymousSince = conn.lastActivity;
          schedule(conn);
        }
      },
      // The same error formatting as GraphQL over HTTP: stable codes, nothing internal.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((error) => deps.formatError(error.toJSON(), error)) } : undefined,
      // Errors before execution (parse, validation, limits) are the client's own and say what was wrong.
      onError: (ctx, id, _payload, errors) => {
        // An operation refused before it ran never completes: it no longer keeps the socket open.
        const conn = connectionOf(ctx.extra);
        if (conn.operations.delete(id)) schedule(conn);
        return errors.map((error) =>
          error.originalError || error.extensions?.code
            ? deps.formatError(error.toJSON(), error)
            : { message: error.message, locations: error.locations, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        );
      },
      context: (ctx): RequestContext => {
        const requestId = requestIdFrom(undefined);
        const actor = connectionOf(ctx.extra).actor;
        return createRequestContext(services, {
          requestId,
          log: log.child({ requestId, transport: 'graphql-ws' }),
          actor,
          authVia: actor ? 'connection' : null,
          authProblem: null,
          caller: { clientAddress: connectionOf(ctx.extra).address, userAgent: ctx.extra.request.headers['user-agent'] ?? null },
          sessionCookie: { set: () => undefined, clear: () => undefined },
        });
      },
    },
    wsServer,
  );

  return {
    dispose: async () => {
      for (const conn of open) {
        if (conn.timer) clearTimeout(conn.timer);
        conn.stopListening?.();
      }
      deps.server.off('upgrade', onUpgrade);
      await cleanup.dispose();
    },
  };
}

/**
 * Parses and validates an operation with the same rules as GraphQL over HTTP (depth, no introspection in
 * production), then checks its cost with its variables: the arguments to run it, or the errors.
 */
function prepareOperation(deps: GraphqlWsDeps, payload: SubscribePayload): ExecutionArgs | readonly GraphQLError[] {
  let document: DocumentNode;
  try {
    document = parse(payload.query);
  } catch (error) {
    return [error instanceof GraphQLError ? error : new GraphQLError('The query could not be parsed')];
  }
  const errors = validate(deps.schema, document, [...specifiedRules, ...deps.validationRules]);
  if (errors.length) return errors;
  const operationName = payload.operationName ?? undefined;
  const operation = getOperationAST(document, operationName);
  if (!operation) return [new GraphQLError('Unable to identify operation')];
  const costError = operationCostError(deps.schema, document, operation, payload.variables);
  if (costError) return [costError];
  return { schema: deps.schema, document, operationName, variableValues: payload.variables };
}

/**
 * graphql-ws clients authenticate with `connectionParams.sessionToken` (or `authorization: "Bearer …"`);
 * browsers may instead rely on the session cookie, but only from our own origin. A presented but
 * invalid credential refuses the connection; none gives an anonymous one.
 */
async function websocketActor(
  request: IncomingMessage,
  params: Record<string, unknown> | undefined,
  config: Config,
  services: Services,
): Promise<Actor | null | 'refused'> {
  const authorization = typeof params?.authorization === 'string' ? params.authorization : undefined;
  const token =
    (typeof params?.sessionToken === 'string' ? params.sessionToken : undefined) ??
    authorization?.match(/^Bearer\s+(\S+)$/i)?.[1] ??
    null;
  if (token) return (await services.accounts.authenticate(token)) ?? 'refused';
  const cookieToken = readCookie(request.headers.cookie, sessionCookieName(config));
  if (!cookieToken) return null;
  // A websocket upgrade is a GET, so check the origin explicitly: cross-site websocket hijacking.
  if (isCrossSiteWrite('POST', request.headers)) return 'refused';
  return (await services.accounts.authenticate(cookieToken)) ?? 'refused';
}
