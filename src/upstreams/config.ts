import { z } from 'zod';

/**
 * Upstream routes are operator configuration (the `upstreams` section of BAIKAL_CONFIG); credentials
 * come from the environment by variable name, so the file can be committed and never holds a secret.
 * Nothing here is ever shown to users.
 */
const upstreamRoute = z.strictObject({
  /** The public route group this route serves. */
  group: z.string().min(1),
  /** Public model ids served here; optionally mapped to the upstream's own model name. */
  models: z.array(z.string().min(1)).min(1),
  modelMap: z.record(z.string(), z.string().min(1)).default({}),
  /** Share of traffic among routes serving the same model and group. */
  weight: z.number().positive().default(1),
});

const upstream = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'ids are lowercase letters, digits, "_" or "-"'),
  // `video-jobs`: an asynchronous video API (submit, poll, download), see src/video/video-upstream.ts.
  kind: z.enum(['openai-compatible', 'anthropic', 'video-jobs']),
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .refine((value) => !new URL(value).username && !new URL(value).password, 'must not carry credentials; use credentialEnv'),
  /** Name of the environment variable holding the credential. */
  credentialEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name'),
  timeouts: z
    .strictObject({
      connectMs: z.number().int().positive().default(5_000),
      firstByteMs: z.number().int().positive().default(60_000),
      idleMs: z.number().int().positive().default(120_000),
      /**
       * How long an idle connection to the upstream is kept for the next request, when the upstream's answer
       * names no `Keep-Alive: timeout` of its own (with one, its timeout less 2 s is used). Below the 5 s at
       * which common servers (uvicorn, as under vLLM; node) close idle connections without saying so: a
       * longer wait sends requests on connections the upstream is closing, and each such request fails.
       */
      keepAliveMs: z.number().int().positive().default(4_000),
    })
    .prefault({}),
  routes: z.array(upstreamRoute).min(1),
  /**
   * An `openai-compatible` upstream that also serves the Responses API (`POST <baseUrl>/responses`):
   * `/v1/responses` goes to it natively (reasoning items and hosted tools kept) instead of through chat.
   */
  nativeResponses: z.boolean().optional(),
  /** Upstreams tried, in order, when this one fails before any byte reached the client. */
  fallback: z.array(z.string()).default([]),
});

export const upstreamsSchema = z.array(upstream).default([]).superRefine((list, ctx) => {
  const ids = new Set<string>();
  list.forEach((u, i) => {
    if (u.nativeResponses && u.kind !== 'openai-compatible') ctx.addIssue({ code: 'custom', path: [i, 'nativeResponses'], message: 'only an openai-compatible upstream can serve the Responses API' });
    if (ids.has(u.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate upstream id ${u.id}` });
    ids.add(u.id);
  });
  list.forEach((u, i) =>
    u.fallback.forEach((f, j) => {
      if (!ids.has(f)) ctx.addIssue({ code: 'custom', path: [i, 'fallback', j], message: `unknown upstream ${f}` });
      if (f === u.id) ctx.addIssue({ code: 'custom', path: [i, 'fallback', j], message: 'an upstream cannot fall back to itself' });
    }),
  );
});

export type UpstreamDefinition = z.output<typeof upstream>;

/** An upstream ready to call: its definition plus the credential read from the environment. */
export interface Upstream extends UpstreamDefinition {
  credential: string;
}

/**
 * Resolves credentials from `env`. A missing variable is an error naming the variable (never a value),
 * so a misconfigured gateway stops at boot rather than failing requests later.
 */
export function resolveUpstreams(definitions: UpstreamDefinition[], env: NodeJS.ProcessEnv): Upstream[] {
  const missing = definitions.filter((u) => !env[u.credentialEnv]?.trim()).map((u) => `${u.id}: ${u.credentialEnv} is not set`);
  if (missing.length) throw new Error(`Upstream credentials missing: ${missing.join('; ')}`);
  return definitions.map((u) => ({ ...u, credential: env[u.credentialEnv]!.trim() }));
}
