import { requireAdmin, type Actor } from '../shared/actor.js';
import { Cancellation } from '../shared/cancellation.js';
import { DomainError } from '../shared/errors.js';
import { authHeaders } from './auth.js';
import type { BreakerState } from './breaker.js';
import type { UpstreamClient } from './client.js';
import type { UpstreamHealth } from './health.js';
import type { Upstream } from './model.js';
import type { RouteTable } from './routes.js';

/** One credential's routing state, as the admin page shows it. */
export interface CredentialHealthView {
  upstreamId: string;
  credentialId: string;
  label: string;
  state: BreakerState;
  /** When an open or paused state ends; null when closed. */
  until: Date | null;
  inFlight: number;
  lastFailureAt: Date | null;
}

/** What a test request through one credential found. */
export interface UpstreamTestResult {
  ok: boolean;
  /** The upstream's HTTP status; null when it did not answer. */
  status: number | null;
  latencyMs: number;
  /** `ok`, or why not: timeout, connection, rate_limited, server_error, rejected, misconfigured. */
  outcome: string;
  /** The upstream model the test asked for. */
  model: string | null;
}

/**
 * The operator's live view of routing (each upstream credential's breaker state and load, in this process),
 * and the "test" action: one minimal request through a chosen credential, billed to nobody, its latency and
 * outcome shown (never the upstream's words: they may quote a secret). Admins only.
 */
export class UpstreamOps {
  constructor(private readonly deps: { routes: RouteTable; health: UpstreamHealth; upstreams: UpstreamClient }) {}

  health(actor: Actor): CredentialHealthView[] {
    requireAdmin(actor);
    const known = new Map(this.deps.health.snapshot().map((t) => [`${t.upstreamId}/${t.credentialId}`, t]));
    return this.deps.routes.all.flatMap((upstream) =>
      upstream.credentials.map((credential) => {
        const t = known.get(`${upstream.id}/${credential.id}`);
        return {
          upstreamId: upstream.id,
          credentialId: credential.id,
          label: credential.label,
          state: t?.state ?? 'closed',
          until: t?.until ? new Date(t.until) : null,
          inFlight: t?.inFlight ?? 0,
          lastFailureAt: t?.lastFailureAt ? new Date(t.lastFailureAt) : null,
        };
      }),
    );
  }

  /** `model`: a public model the upstream routes (default: its first route's). */
  async test(actor: Actor, input: { upstreamId: string; credentialId: string; model?: string | null }): Promise<UpstreamTestResult> {
    requireAdmin(actor);
    const upstream = this.deps.routes.all.find((u) => u.id === input?.upstreamId);
    const credential = upstream?.credentials.find((c) => c.id === input?.credentialId);
    if (!upstream || !credential) throw new DomainError('not_found', 'No such upstream credential (enabled ones only)');
    const started = performance.now();
    const signal = new Cancellation();
    const timer = setTimeout(() => signal.cancel(), upstream.timeouts.firstByteMs);
    const route = input.model ? upstream.routes.find((r) => r.model === input.model) : upstream.routes[0];
    if (input.model && !route) throw new DomainError('not_found', `The upstream does not route ${input.model}`);
    const { path, body, model } = minimalRequest(upstream, route?.upstreamModel ?? null);
    try {
      const answer = body === null ? await this.deps.upstreams.get(upstream, path, authHeaders(upstream, credential)) : await this.deps.upstreams.post(upstream, path, JSON.stringify(body), authHeaders(upstream, credential), signal);
      const latencyMs = Math.round(performance.now() - started);
      if (answer.status === 200) {
        answer.body.destroy();
        return { ok: true, status: 200, latencyMs, outcome: 'ok', model };
      }
      const failure = await this.deps.upstreams.failureFrom(upstream.id, answer);
      return { ok: false, status: answer.status, latencyMs, outcome: failure.kind, model };
    } catch (error) {
      const kind = signal.cancelled ? 'timeout' : this.deps.upstreams.failureOf(error, upstream.id).kind;
      return { ok: false, status: null, latencyMs: Math.round(performance.now() - started), outcome: kind, model };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The cheapest request each kind answers: one output token of a routed model, or its model list. */
function minimalRequest(upstream: Upstream, model: string | null): { path: string; body: Record<string, unknown> | null; model: string | null } {
  if (upstream.kind === 'video-jobs' || model === null) return { path: '/models', body: null, model: null };
  const messages = [{ role: 'user', content: 'ping' }];
  return upstream.kind === 'anthropic' ? { path: '/messages', body: { model, max_tokens: 1, messages }, model } : { path: '/chat/completions', body: { model, max_tokens: 1, messages }, model };
}
