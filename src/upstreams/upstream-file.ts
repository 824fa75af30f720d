import { newId } from '../shared/ids.js';
import { credentialEnvsOf, type UpstreamDefinition } from './config.js';
import type { RouteFields, UpstreamsWriter } from './upstreams.repository.js';

export interface ApplyResult {
  created: string[];
  updated: string[];
  /** Deleted because the file no longer names them (`prune` only). */
  pruned: string[];
}

/**
 * Writes the operator file's upstreams (already validated by `upstreamsSchema`): a new id is created enabled; an
 * existing one takes the file's settings, routes and prices, and its environment-variable credentials become the
 * file's (stored secrets an admin added stay, and so does whether it is enabled: that is an admin's decision).
 * Upstreams the file does not name are left alone, or deleted with `prune`. Credentials are stored as references
 * to their variables, never copied.
 */
export async function writeDefinitions(tx: UpstreamsWriter, definitions: UpstreamDefinition[], options: { prune: boolean }): Promise<ApplyResult> {
  const result: ApplyResult = { created: [], updated: [], pruned: [] };
  for (const [i, definition] of definitions.entries()) {
    const fields = {
      kind: definition.kind,
      baseUrl: definition.baseUrl,
      nativeResponses: definition.nativeResponses === true,
      timeouts: definition.timeouts,
      maxConcurrent: definition.maxConcurrent,
      fallback: definition.fallback,
      health: definition.health,
    };
    if (await tx.upstream(definition.id, true)) {
      await tx.updateUpstream(definition.id, fields);
      result.updated.push(definition.id);
    } else {
      await tx.insertUpstream(definition.id, { ...fields, enabled: true });
      result.created.push(definition.id);
    }
    await tx.syncEnvCredentials(
      definition.id,
      credentialEnvsOf(definition).map((c) => ({ id: newId(), env: c.env, label: c.label ?? c.env, maxConcurrent: c.maxConcurrent ?? null })),
    );
    await tx.replaceRoutes(definition.id, routesOf(definition, i));
    await tx.replacePrices(definition.id, Object.entries(definition.prices).map(([model, prices]) => ({ model, ...prices })));
  }
  if (options.prune) {
    const named = new Set(definitions.map((definition) => definition.id));
    result.pruned = (await tx.deleteUpstreams((await tx.upstreamIds()).filter((id) => !named.has(id)))).sort();
  }
  return result;
}

/** The file's routes, one per (model, group); a pair named twice is the operator's mistake, said by its place in the file. */
function routesOf(definition: UpstreamDefinition, index: number): (RouteFields & { id: string })[] {
  const seen = new Set<string>();
  return definition.routes.flatMap((route, j) =>
    route.models.map((model, k) => {
      const key = `${route.group}\u0000${model}`;
      if (seen.has(key)) throw new Error(`upstreams.${index}.routes.${j}.models.${k}: ${definition.id} already routes ${model} in group ${route.group}`);
      seen.add(key);
      return { id: newId(), model, group: route.group, upstreamModel: route.modelMap[model] ?? model, weight: route.weight, priority: route.priority, enabled: true };
    }),
  );
}
