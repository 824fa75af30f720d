import { createTRPCClient, httpLink } from '@trpc/client';
import { print } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { AppRouter } from '../../src/trpc/router.js';

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A plain HTTP call returning the parsed JSON body (or null) and the raw text for leak searches. */
export async function http<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; token?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  } else if (options.rawBody !== undefined) {
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

let counter = 0;
/** Unique, valid registration data for one test account. */
export function newAccountInput(prefix = 'user') {
  counter += 1;
  const tag = `${prefix}${counter}${Math.random().toString(36).slice(2, 8)}`;
  return { username: tag, email: `${tag}@example.test`, password: `pw-${tag}-secret` };
}

/** Registers through REST and returns the account JSON and its session token. */
export async function registerRest(baseUrl: string, input = newAccountInput()) {
  const response = await http(baseUrl, 'POST', '/auth/register', { body: input });
  if (response.status !== 201) throw new Error(`register failed: ${response.status} ${response.text}`);
  return { input, account: response.body, token: response.headers.get('x-session-token')!, response };
}

export interface GraphQLResult<R> {
  status: number;
  data: R | null;
  errors?: { message: string; extensions?: Record<string, any>; path?: string[] }[];
  setCookie: string | null;
}

/** Executes a typed operation from `test/graphql/generated.ts` over HTTP. */
export async function graphql<R, V>(
  baseUrl: string,
  document: TypedDocumentNode<R, V>,
  variables?: V,
  token?: string,
): Promise<GraphQLResult<R>> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: print(document), variables }),
  });
  const json = (await response.json()) as { data?: R | null; errors?: GraphQLResult<R>['errors'] };
  return { status: response.status, data: json.data ?? null, errors: json.errors, setCookie: response.headers.get('set-cookie') };
}

/** A typed tRPC client, optionally signed in with a session token. */
export function trpcClient(baseUrl: string, token?: string) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${baseUrl}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
  });
}
