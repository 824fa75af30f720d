import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import { getOperationAST, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { ServerOptions, SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { formatGraphQLError } from '../resolvers/errors.js';
import { operationCostError } from '../resolvers/limits.js';
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

/** WS_* settings (see the limits below). */
export interface WebsocketSettings {
  maxPerAccount: number;
  maxPerAddress: number;
  anonymousSubscribeMs: number;
  idleMs: number;
  sessionRecheckMs: number;
}

export interface GraphqlWsDeps {
  server: Server;
  schema: GraphQLSchema;
  validationRules: ValidationRule[];
  formatError: ReturnType<typeof formatGraphQLError>;
  limits: WebsocketSettings;
  /** PUBLIC_HTTPS: which session cookie a browser's socket carries. */
  publicHttps: boolean;
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
  // Upgrades are handed over by hand rather than with `server`: attached, ws re-emits the HTTP server's errors and
  // graphql-ws prints them with a stack (a port already in use showed as "Internal error emitted on the WebSocket
  // server" above our own one-line message). Other paths are refused by handleUpgrade (path), as before.
  const wsServer = new WebSocketServer({ noServer: true, path: '/graphql' });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit('connection', ws, request));
  deps.server.on('upgrade', onUpgrade);
  const sockets = new Sockets(deps);
  // Registered before graphql-ws's own listener: a socket over the address cap is closed before it is served.
  wsServer.on('connection', (socket: WebSocket, request: IncomingMessage) => sockets.accept(socket, request));
  const cleanup = useServer(graphqlWsHooks(deps, sockets), wsServer);
  return {
    dispose: async () => {
      sockets.stopAll();
      deps.server.off('upgrade', onUpgrade);
      await cleanup.dispose();
    },
  };
}

type WsExtra = { socket: WebSocket; request: IncomingMessage };

/** graphql-ws's hooks: who connects, which operations run, how their errors read, and their request context. */
function graphqlWsHooks(deps: GraphqlWsDeps, sockets: Sockets): ServerOptions<Record<string, unknown> | undefined, WsExtra> {
  const { services, log } = deps;
  return {
    schema: deps.schema,
    onConnect: async (ctx) => {
      const actor = await websocketActor(ctx.extra.request, ctx.connectionParams, deps.publicHttps, services);
      return actor !== 'refused' && sockets.signIn(sockets.of(ctx.extra.socket), actor);
    },
    onSubscribe: async (ctx, id, payload) => {
      const conn = sockets.of(ctx.extra.socket);
      if (!(await sockets.sessionValid(conn))) return [new GraphQLError('Your session has ended; sign in again', { extensions: { code: 'UNAUTHENTICATED' } })];
      const args = prepareOperation(deps, payload);
      if (!('document' in args)) return args;
      if (conn.actor || getOperationAST(args.document, args.operationName)?.operation === 'subscription') sockets.started(conn, id);
      return args;
    },
    onComplete: (ctx, id) => sockets.completed(sockets.of(ctx.extra.socket), id),
    // The same error formatting as GraphQL over HTTP: stable codes, nothing internal.
    onNext: (_ctx, _id, _payload, _args, result) =>
      result.errors ? { ...result, errors: result.errors.map((error) => deps.formatError(error.toJSON(), error)) } : undefined,
    // Errors before execution (parse, validation, limits) are the client's own and say what was wrong.
    onError: (ctx, id, _payload, errors) => {
      // An operation refused before it ran never completes: it no longer keeps the socket open.
      sockets.refused(sockets.of(ctx.extra.socket), id);
      return errors.map((error) =>
        error.originalError || error.extensions?.code
          ? deps.formatError(error.toJSON(), error)
          : { message: error.message, locations: error.locations, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
      );
    },
    context: (ctx): RequestContext => {
      const requestId = requestIdFrom(undefined);
      const conn = sockets.of(ctx.extra.socket);
      return createRequestContext(services, {
        requestId,
        log: log.child({ requestId, transport: 'graphql-ws' }),
        actor: conn.actor,
        authVia: conn.actor ? 'connection' : null,
        authProblem: null,
        caller: { clientAddress: conn.address, userAgent: ctx.extra.request.headers['user-agent'] ?? null },
        sessionCookie: { set: () => undefined, clear: () => undefined },
      });
    },
  };
}

/** The open sockets of this process: their counts per address and account, their deadlines and their sessions. */
class Sockets {
  private readonly connections = new WeakMap<object, Connection>();
  private readonly open = new Set<Connection>();
  private readonly perAddress = new Map<string, number>();
  private readonly perAccount = new Map<string, number>();
  private readonly limits: WebsocketSettings;

  constructor(private readonly deps: GraphqlWsDeps) {
    this.limits = deps.limits;
  }

  of(socket: WebSocket): Connection {
    return this.connections.get(socket)!;
  }

  /** A new socket: refused over the address cap, else counted and given its deadlines. */
  accept(socket: WebSocket, request: IncomingMessage): void {
    const address = this.deps.clientAddressOf(request);
    const now = Date.now();
    const conn: Connection = { socket, address, actor: null, operations: new Set(), lastActivity: now, anonymousSince: now, nextRecheck: now + this.limits.sessionRecheckMs, timer: null, stopListening: null, signedOut: false };
    this.connections.set(socket, conn);
    if ((this.perAddress.get(address) ?? 0) >= this.limits.maxPerAddress) return close(conn, WS_CLOSE.tooMany, 'Too many connections from this address');
    bump(this.perAddress, address, 1);
    this.open.add(conn);
    socket.on('message', (data) => {
      conn.lastActivity = Date.now();
      // The same nesting bound as every other JSON surface (graphql-ws parses the message after this listener).
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      if (jsonNestsDeeper(bytes)) close(conn, WS_CLOSE.badMessage, `Messages may nest at most ${MAX_JSON_DEPTH} levels deep`);
    });
    socket.once('close', () => {
      this.open.delete(conn);
      bump(this.perAddress, address, -1);
      if (conn.actor) bump(this.perAccount, conn.actor.userId, -1);
      if (conn.timer) clearTimeout(conn.timer);
      conn.stopListening?.();
    });
    this.schedule(conn);
  }

  /** The socket's credential was accepted (or none was given): false refuses it over the account cap. */
  signIn(conn: Connection, actor: Actor | null): boolean {
    if (actor) {
      if ((this.perAccount.get(actor.userId) ?? 0) >= this.limits.maxPerAccount) {
        close(conn, WS_CLOSE.tooMany, 'Too many connections for this account');
        return false;
      }
      bump(this.perAccount, actor.userId, 1);
      conn.actor = actor;
      this.listenForSignOut(conn, actor);
    }
    this.schedule(conn);
    return true;
  }

  started(conn: Connection, id: string): void {
    conn.operations.add(id);
    this.schedule(conn);
  }

  completed(conn: Connection, id: string): void {
    if (!conn.operations.delete(id)) return;
    conn.lastActivity = Date.now();
    if (conn.operations.size === 0) conn.anonymousSince = conn.lastActivity;
    this.schedule(conn);
  }

  refused(conn: Connection, id: string): void {
    if (conn.operations.delete(id)) this.schedule(conn);
  }

  stopAll(): void {
    for (const conn of this.open) {
      if (conn.timer) clearTimeout(conn.timer);
      conn.stopListening?.();
    }
  }

  /** Whether the connection's session is valid now; closes the socket (4401) when it is not. */
  async sessionValid(conn: Connection): Promise<boolean> {
    if (!conn.actor) return true;
    if (conn.signedOut) return false;
    const actor = await this.deps.services.accounts.sessionActor(conn.actor.sessionId).catch((error: unknown) => {
      this.deps.log.warn({ err: error }, 'graphql-ws session check failed');
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
  }

  /** Re-arms the one timer a connection has, for whichever of its deadlines comes first. */
  private schedule(conn: Connection): void {
    if (conn.timer) clearTimeout(conn.timer);
    conn.timer = null;
    const idle = conn.operations.size === 0;
    const next = Math.min(
      idle ? conn.lastActivity + this.limits.idleMs : Infinity,
      idle && !conn.actor ? conn.anonymousSince + this.limits.anonymousSubscribeMs : Infinity,
      conn.actor ? conn.nextRecheck : Infinity,
    );
    if (next === Infinity) return;
    conn.timer = setTimeout(() => this.tick(conn), Math.max(0, next - Date.now()) + 5);
    conn.timer.unref();
  }

  /** A deadline may have passed: close, re-check the session, or wait for the next one. */
  private tick(conn: Connection): void {
    const now = Date.now();
    if (conn.operations.size === 0) {
      if (now >= conn.lastActivity + this.limits.idleMs) return close(conn, WS_CLOSE.timeout, 'Idle timeout');
      if (!conn.actor && now >= conn.anonymousSince + this.limits.anonymousSubscribeMs) return close(conn, WS_CLOSE.timeout, 'Subscribe within the time allowed, or sign in');
    }
    if (conn.actor && now >= conn.nextRecheck) {
      conn.nextRecheck = now + this.limits.sessionRecheckMs;
      return void this.sessionValid(conn).then((valid) => valid && this.schedule(conn));
    }
    this.schedule(conn);
  }

  /** Closes the socket as soon as its session is signed out (in this process or, with shared pub/sub, any). */
  private listenForSignOut(conn: Connection, actor: Actor): void {
    const events = this.deps.pubsub.subscribe(Topics.SessionEvents, actor.userId);
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
  }
}

function close(conn: Connection, code: number, reason: string): void {
  if (conn.socket.readyState === conn.socket.OPEN || conn.socket.readyState === conn.socket.CONNECTING) conn.socket.close(code, reason);
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
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
  publicHttps: boolean,
  services: Services,
): Promise<Actor | null | 'refused'> {
  const authorization = typeof params?.authorization === 'string' ? params.authorization : undefined;
  const token =
    (typeof params?.sessionToken === 'string' ? params.sessionToken : undefined) ??
    authorization?.match(/^Bearer\s+(\S+)$/i)?.[1] ??
    null;
  if (token) return (await services.accounts.authenticate(token)) ?? 'refused';
  const cookieToken = readCookie(request.headers.cookie, sessionCookieName(publicHttps));
  if (!cookieToken) return null;
  // A websocket upgrade is a GET, so check the origin explicitly: cross-site websocket hijacking.
  if (isCrossSiteWrite('POST', request.headers)) return 'refused';
  return (await services.accounts.authenticate(cookieToken)) ?? 'refused';
}
