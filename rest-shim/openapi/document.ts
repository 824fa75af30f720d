import { z } from 'zod';
import { cabinetErrorAnswer, validationErrorAnswer } from '../answer-fields.js';
import type { SpecNames } from '../handler.js';
import type { Access, Answer, Route } from '../route.js';
import { anthropicErrorAnswer, openAiErrorAnswer } from './v1-wire.js';
import { JsonSchemas, type JsonSchema } from './json-schemas.js';

/** The OpenAPI version of the document (3.1: its schemas are JSON Schema 2020-12, which zod writes). */
export const OPENAPI_VERSION = '3.1.1';

export interface DocumentOptions {
  /** SPEC.md 9: the interface description's own version. */
  version: string;
  /** The session cookie's name (`__Host-` prefixed behind HTTPS). */
  sessionCookie: string;
}

/** The document's parts this module writes; the rest of OpenAPI is not used. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, object>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, object> };
}

const TAGS: Record<string, string> = {
  account: 'SPEC.md 4.1: registration, sign-in and the account (cabinet session).',
  keys: 'SPEC.md 4.2: API keys.',
  usage: 'SPEC.md 4.3: usage events, summary, timeseries and the daily leaderboard.',
  catalog: 'SPEC.md 4.3: the public catalog and service status.',
  payments: 'SPEC.md 4.4: invoices, bonus tiers and the agreement.',
  announcements: 'SPEC.md 4.5: announcements.',
  organizations: 'Organizations (issue 56): teams with a wallet, members, roles, invitations and keys (session). Any id of an organization the caller does not belong to answers 404.',
  videos: 'The finished videos of the account, for the cabinet’s player (session).',
  health: 'SPEC.md 4.5: liveness, health, status and readiness.',
  inference: 'SPEC.md 4.6-4.8: the /v1 surface, authenticated by API key.',
  bridge: 'SPEC.md 4.6: the editor-integration bridge (one model, a family-b key).',
};

/** The header the Messages format requires (SPEC.md 5 and 9). */
const ANTHROPIC_VERSION: Omit<Parameter, 'required'> = { name: 'anthropic-version', in: 'header', schema: { type: 'string', enum: ['2023-06-01'] } };

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: object;
  description?: string;
}

const SECURITY: Record<Access, object[] | undefined> = {
  public: [],
  session: [{ session: [] }, { sessionToken: [] }],
  'optional-session': [{}, { session: [] }, { sessionToken: [] }],
  key: [{ apiKey: [] }],
  'messages-key': [{ messagesKey: [] }],
  'optional-key': [{}, { apiKey: [] }, { messagesKey: [] }],
};

/**
 * The interface description (OpenAPI 3.1) of the given routes: every schema in it is written by zod
 * from the schemas the services validate with and the mappers answer with, so it cannot drift from them.
 */
export function openApiDocument(routes: Route[], options: DocumentOptions): OpenApiDocument {
  const schemas = new JsonSchemas();
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method] = operation(route, schemas);
  }
  const tags = [...new Set(routes.map((route) => route.tag))].map((name) => ({ name, description: TAGS[name] ?? name }));
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Baikal',
      version: options.version,
      description:
        'A model-access gateway: the cabinet’s REST paths (a session from /auth/register or /auth/login, as the cookie or as `Authorization: Bearer <session token>`) and the /v1 inference surface (an API key). Errors: 422 with `detail: [{loc, msg, type}]` everywhere; `{detail, code}` on the cabinet paths, OpenAI’s or Anthropic’s error body on /v1.',
    },
    tags,
    paths,
    components: {
      schemas: schemas.components,
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: options.sessionCookie, description: 'The cabinet session cookie (set by register and login).' },
        sessionToken: { type: 'http', scheme: 'bearer', description: 'The session token register and login return in x-session-token.' },
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (`<brand>-sk-…`).' },
        messagesKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key, on the Messages format (with anthropic-version: 2023-06-01).' },
      },
    },
  };
}

function operation(route: Route, schemas: JsonSchemas): object {
  const parameters = [...parametersOf(route, 'path', route.params, schemas), ...parametersOf(route, 'query', route.query, schemas)];
  if (route.access === 'messages-key') parameters.push({ ...ANTHROPIC_VERSION, required: true });
  if (route.access === 'optional-key') parameters.push({ ...ANTHROPIC_VERSION, required: false, description: 'Sent by Anthropic-style callers: the answer (and any error) is in Anthropic’s shape.' });
  const responses: Record<string, object> = {};
  const limits = limitHeadersOf(route);
  for (const [status, answer] of Object.entries(route.answers)) responses[status] = { ...response(answer, schemas), ...(limits ? { headers: limits } : {}) };
  Object.assign(responses, errorResponses(route, schemas));
  if (limits && route.rateLimited) responses['429'] = { description: 'A limit refused the request: the key’s rate or concurrency, its account’s, the gateway’s, or the model’s routes (`x-ratelimit-limited-by`); retry after the announced wait', headers: { ...limits, ...REFUSAL_HEADERS }, content: { 'application/json': { schema: errorShape(route.errors, schemas) } } };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: SECURITY[route.access],
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: requestBody(route, route.body, schemas) } : {}),
    responses,
  };
}

/** Path or query parameters: the input schema's fields, under SPEC names; a path parameter without a schema is a string. */
function parametersOf(route: Route, where: 'path' | 'query', names: SpecNames | undefined, schemas: JsonSchemas): Parameter[] {
  if (!names) {
    if (where === 'query') return [];
    return [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => ({ name: match[1]!, in: 'path', required: true, schema: { type: 'string' } }));
  }
  const object = schemas.of(names.spec(), 'input');
  const required = new Set(Array.isArray(object.required) ? object.required : []);
  const properties = (object.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).map(([name, schema]) => ({ name, in: where, required: where === 'path' || required.has(name), schema }));
}

function requestBody(route: Route, names: SpecNames, schemas: JsonSchemas): object {
  const schema = schemas.of(names.spec(), 'input');
  return {
    required: !route.optionalBody,
    content: { 'application/json': { schema }, ...(route.multipart ? { 'multipart/form-data': { schema } } : {}) },
  };
}

function response(answer: Answer, schemas: JsonSchemas): object {
  const content: Record<string, object> = {};
  if (answer.json) content['application/json'] = { schema: schemas.of(answer.json, 'output') };
  if (answer.stream) content['text/event-stream'] = { schema: { type: 'string', description: 'Server-sent events in the format’s own stream shape' } };
  if (answer.media) content[answer.media] = { schema: { type: 'string', contentMediaType: answer.media } };
  return { description: answer.description, ...(Object.keys(content).length ? { content } : {}) };
}

const header = (description: string, schema: object = { type: 'string' }) => ({ description, schema });

/**
 * The key's window on the answers of a /v1 route authenticated by key (docs/api.md, "Rate-limit headers"): after
 * this request on a route that counts against the limits, as it stands on one that does not (nothing counted),
 * and on the model lists only when a key is presented. Their style is the route's error shape's (both: either).
 */
function limitHeadersOf(route: Route): Record<string, object> | undefined {
  if (!route.rateLimited && !KEYED.includes(route.access)) return undefined;
  const counted = route.rateLimited === true ? 'after this one' : route.rateLimited ? `after this one when it is ${route.rateLimited}` : 'this request is not counted';
  const when = route.access === 'optional-key' ? ' (when a key is presented)' : '';
  if (route.errors === 'either') return { ...windowHeaders('openai', counted, when), ...windowHeaders('anthropic', counted, ' (with anthropic-version' + (when ? ', when a key is presented)' : ')')) };
  return windowHeaders(route.errors === 'anthropic' ? 'anthropic' : 'openai', counted, when);
}

const KEYED: Access[] = ['key', 'messages-key', 'optional-key'];

function windowHeaders(style: 'openai' | 'anthropic', counted: string, when: string): Record<string, object> {
  const limit = header(`The key’s requests per window (a minute by default)${when}`, { type: 'integer' });
  const remaining = header(`Requests left in the window (${counted})${when}`, { type: 'integer' });
  if (style === 'anthropic') {
    return {
      'anthropic-ratelimit-requests-limit': limit,
      'anthropic-ratelimit-requests-remaining': remaining,
      'anthropic-ratelimit-requests-reset': header(`When the window is empty again (RFC 3339)${when}`, { type: 'string', format: 'date-time' }),
    };
  }
  return {
    'x-ratelimit-limit-requests': limit,
    'x-ratelimit-remaining-requests': remaining,
    'x-ratelimit-reset-requests': header(`How long until the window is empty again, as a Go duration (\`1s\`, \`59.5s\`, \`1m0s\`)${when}`),
  };
}

/** What a 429 adds: the wait, in the units the SDKs read, and which limit refused the request. */
const REFUSAL_HEADERS: Record<string, object> = {
  'retry-after': header('Seconds to wait before retrying', { type: 'integer' }),
  'retry-after-ms': header('Milliseconds to wait before retrying (the official SDKs read it first)', { type: 'integer' }),
  'x-ratelimit-limited-by': header('Which limit refused the request', { type: 'string', enum: ['key', 'account', 'gateway', 'model'] }),
};

/** The error answers of a route: SPEC.md's 422 wherever there is an input, 401 where a credential is required, and every other error in the surface's shape. */
function errorResponses(route: Route, schemas: JsonSchemas): Record<string, object> {
  const shape = errorShape(route.errors, schemas);
  const hasInput = route.body !== undefined || route.query !== undefined || route.params !== undefined;
  const unprocessable = route.errors ? shape : schemas.of(validationErrorAnswer, 'output');
  return {
    ...(hasInput ? { 422: { description: 'Validation failed: `detail` lists every issue as {loc, msg, type}', content: { 'application/json': { schema: unprocessable } } } } : {}),
    ...(['session', 'key', 'messages-key'].includes(route.access) ? { 401: { description: 'Not signed in, or no valid credential', content: { 'application/json': { schema: shape } } } } : {}),
    default: { description: 'An error (see SPEC.md 7 for the statuses)', content: { 'application/json': { schema: shape } } },
  };
}

function errorShape(errors: Route['errors'], schemas: JsonSchemas): JsonSchema {
  switch (errors) {
    case undefined:
      return schemas.of(cabinetErrorAnswer, 'output');
    case 'openai':
      return schemas.of(openAiErrorAnswer, 'output');
    case 'anthropic':
      return schemas.of(anthropicErrorAnswer, 'output');
    case 'either':
      return schemas.of(z.union([openAiErrorAnswer, anthropicErrorAnswer]), 'output');
  }
}
