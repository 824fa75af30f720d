import type { Catalog } from '../catalog/catalog.js';
import { DomainError, type ValidationIssue } from '../shared/errors.js';
import type { UpstreamKind } from './model.js';

/**
 * The checks of an admin's upstream edit that need more than the input's shape: the live catalog, the other
 * upstreams, this process's environment. Each returns issues located like the input's fields (`routes[2].group` is
 * `['routes', 2, 'group']`), so every transport names the field.
 */
type Path = (string | number)[];

/** Which upstream kinds can serve a catalog model of each kind (text through either chat adapter; images and video each by one). */
const KINDS_FOR: Record<'text' | 'image' | 'video', readonly UpstreamKind[]> = {
  text: ['openai-compatible', 'anthropic'],
  image: ['openai-compatible'],
  video: ['video-jobs'],
};

export function failIfAny(issues: ValidationIssue[]): void {
  if (issues.length) throw new DomainError('validation_failed', 'Request validation failed', { issues });
}

function issue(loc: Path, msg: string, type = 'value_error'): ValidationIssue {
  return { loc, msg, type };
}

/** Why an upstream of `kind` cannot serve a catalog model, or null when it can (or the model is unknown: said elsewhere). */
export function kindMismatch(modelId: string, kind: UpstreamKind, catalog: Catalog): string | null {
  const model = catalog.models.get(modelId);
  if (!model || KINDS_FOR[model.kind].includes(kind)) return null;
  return `${modelId} is a ${model.kind} model: an upstream of kind ${kind} cannot serve it (${KINDS_FOR[model.kind].join(' or ')} can)`;
}

/** Routes: each (model, group) offered by the catalog, once, and servable by an upstream of `kind`. */
export function routeIssues(routes: readonly { model: string; group: string }[], kind: UpstreamKind, catalog: Catalog, at: Path): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  routes.forEach((route, i) => {
    const model = catalog.models.get(route.model);
    const mismatch = kindMismatch(route.model, kind, catalog);
    if (!model) issues.push(issue([...at, i, 'model'], `unknown model ${route.model}: the catalog has no such model`));
    else if (mismatch) issues.push(issue([...at, i, 'model'], mismatch));
    if (!catalog.groups.has(route.group)) issues.push(issue([...at, i, 'group'], `unknown group ${route.group}: the catalog has no such route group`));
    else if (model && model.groups[route.group] === undefined) issues.push(issue([...at, i, 'group'], `the catalog does not offer ${route.model} in group ${route.group}`));
    const key = `${route.group}\u0000${route.model}`;
    if (seen.has(key)) issues.push(issue([...at, i, 'model'], `${route.model} in group ${route.group} is listed twice`));
    seen.add(key);
  });
  return issues;
}

/** A change of kind: every route the upstream has must suit the new kind (said on `kind`, the field that changed). */
export function kindChangeIssues(routes: readonly { model: string }[], kind: UpstreamKind, catalog: Catalog): ValidationIssue[] {
  return [...new Set(routes.map((route) => kindMismatch(route.model, kind, catalog)).filter((m) => m !== null))].map((msg) => issue(['kind'], `${msg}; change its routes first`));
}

/** Prices: for catalog models, one entry each. */
export function priceIssues(prices: readonly { model: string }[], catalog: Catalog, at: Path): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  prices.forEach((price, i) => {
    if (!catalog.models.has(price.model)) issues.push(issue([...at, i, 'model'], `unknown model ${price.model}: the catalog has no such model`));
    if (seen.has(price.model)) issues.push(issue([...at, i, 'model'], `${price.model} is listed twice`));
    seen.add(price.model);
  });
  return issues;
}

/** The rules of the operator file's schema for one upstream: Responses natively only on openai-compatible, fallbacks that exist and are not itself. */
export function upstreamIssues(upstream: { id: string; kind: UpstreamKind; nativeResponses: boolean; fallback: readonly string[] }, existing: ReadonlySet<string>, given: { kind: boolean }): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (upstream.nativeResponses && upstream.kind !== 'openai-compatible') {
    issues.push(issue([given.kind ? 'kind' : 'nativeResponses'], given.kind ? 'an upstream serving the Responses API natively must be openai-compatible (set nativeResponses to false with it)' : 'only an openai-compatible upstream can serve the Responses API'));
  }
  const seen = new Set<string>();
  upstream.fallback.forEach((id, j) => {
    if (id === upstream.id) issues.push(issue(['fallback', j], 'an upstream cannot fall back to itself'));
    else if (!existing.has(id)) issues.push(issue(['fallback', j], `unknown upstream ${id}`));
    if (seen.has(id)) issues.push(issue(['fallback', j], `${id} is listed twice`));
    seen.add(id);
  });
  return issues;
}

/**
 * A credential's source: a named variable must be set in this process's environment (an unset one would serve
 * nothing), and a secret can be stored only when the vault can seal it.
 */
export function credentialIssues(credential: { secret?: string | null; env?: string | null }, at: Path, deps: { env: NodeJS.ProcessEnv; canSeal: () => boolean }): ValidationIssue[] {
  if (credential.env != null && !deps.env[credential.env]?.trim()) {
    return [issue([...at, 'env'], `environment variable ${credential.env} is not set in the gateway's environment`, 'env_not_set')];
  }
  if (credential.secret != null && !deps.canSeal()) {
    return [issue([...at, 'secret'], 'a secret cannot be stored: BAIKAL_SECRET_KEY is not set (required in production); name an environment variable with env instead', 'secret_key_missing')];
  }
  return [];
}
