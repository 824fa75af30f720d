import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { print } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import type { Actor } from '../../src/shared/actor.js';
import { createLogger, type Logger } from '../../src/shared/logging.js';
import type { GraphQLResult } from './clients.js';

/** Offered in the `premium` group of `catalogWithPremium()`; every other model is offered in `cheap` only. */
export const PREMIUM_MODEL = 'gen-5.6-sol';

/** The shipped catalog with a second public group, `premium`, that offers PREMIUM_MODEL only. */
export function catalogWithPremium(): object {
  const catalog = structuredClone(defaultCatalog) as unknown as { groups: object[]; models: { id: string; groups: Record<string, unknown> }[] };
  catalog.groups.push({ id: 'premium', label: 'Premium', public: true });
  const model = catalog.models.find((m) => m.id === PREMIUM_MODEL)!;
  model.groups.premium = model.groups.cheap;
  return catalog;
}

/** A temporary directory (for DATA_DIR and operator files), removed by `remove()`. */
export function tempDir(): { dir: string; file(name: string, data: object): string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'baikal-upstreams-'));
  return {
    dir,
    file: (name, data) => {
      const file = path.join(dir, name);
      writeFileSync(file, JSON.stringify(data));
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A secret no response, log or table may ever show: unique per call, so a hit is certain to be a leak. */
export function canary(prefix: string): string {
  return `${prefix}-canary-${randomBytes(12).toString('hex')}`;
}

export const hexKey = (): string => randomBytes(32).toString('hex');

/** A typed GraphQL call that also keeps the raw response body (every body is searched for secrets). */
export async function graphqlKeeping<R, V>(bodies: string[], baseUrl: string, document: TypedDocumentNode<R, V>, variables: V, token?: string): Promise<GraphQLResult<R>> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: print(document), variables }),
  });
  const text = await response.text();
  bodies.push(text);
  const json = JSON.parse(text) as { data?: R | null; errors?: GraphQLResult<R>['errors'] };
  return { status: response.status, data: json.data ?? null, errors: json.errors, setCookie: response.headers.get('set-cookie') };
}

/** A tRPC call over plain HTTP (v11, no transformer), keeping the raw body. */
export async function trpcKeeping(bodies: string[], baseUrl: string, procedure: string, kind: 'query' | 'mutation', input: unknown, token: string): Promise<{ status: number; body: any }> {
  const url = kind === 'query' ? `${baseUrl}/trpc/${procedure}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}` : `${baseUrl}/trpc/${procedure}`;
  const response = await fetch(url, {
    method: kind === 'query' ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(kind === 'mutation' ? { 'content-type': 'application/json' } : {}) },
    body: kind === 'mutation' ? JSON.stringify(input) : undefined,
  });
  const text = await response.text();
  bodies.push(text);
  return { status: response.status, body: JSON.parse(text) };
}

/** The validation issues' locations of a GraphQL error, joined as `routes.0.model`. */
export function issueLocs(result: { errors?: { extensions?: Record<string, any> }[] }): string[] {
  return (result.errors ?? []).flatMap((error) => ((error.extensions?.issues ?? []) as { loc: (string | number)[] }[]).map((issue) => issue.loc.join('.')));
}

/** A logger whose lines are kept (JSON text), to check what is said and that no secret is. */
export function capturedLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }));
  return { log, lines };
}

/** An administrator as services see one (requireAdmin looks at isAdmin only). */
export function adminActor(): Actor {
  return { userId: randomUUID(), isAdmin: true, sessionId: randomUUID() };
}
