import type { Catalog } from '../catalog/catalog.js';
import type { CatalogModel, Endpoint } from '../catalog/catalog.schemas.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import { DomainError } from '../shared/errors.js';

/**
 * Which catalog model a key may call on an endpoint: 404 for an unknown or invisible model, 403 when
 * the key's scope offers nothing on this endpoint (SPEC.md 4.6 rule 3) or does not include the model,
 * 400 when the model is not served on this endpoint (rule 2) or, on the bridge, is not the bridge's
 * model (rule 1). Every /v1 endpoint that takes a model asks here.
 */
export function resolveModel(catalog: Catalog, principal: KeyPrincipal, endpoint: Endpoint, modelId: string): CatalogModel {
  const scope = { family: principal.providerFamily, group: principal.routeGroup };
  if (endpoint.startsWith('/v1/bridge/')) {
    // The bridge accepts only its own model(s); anything else is refused up front.
    const served = catalog.data.models.filter((m) => m.endpoints.includes(endpoint)).map((m) => m.id);
    if (!served.includes(modelId)) throw new DomainError('bad_request', `The bridge accepts only the model ${served.join(', ')}`, { reason: 'bridge_model_only' });
  }
  const model = catalog.models.get(modelId);
  const visible = model && (Object.keys(model.groups).some((g) => catalog.groups.get(g)?.public) || catalog.allows(scope, model));
  if (!model || !visible) throw new DomainError('not_found', `The model ${JSON.stringify(modelId)} does not exist`, { reason: 'model_not_found' });
  if (!catalog.data.models.some((m) => m.family === scope.family && m.endpoints.includes(endpoint))) {
    throw new DomainError('forbidden', `Keys of this scope are not accepted on ${endpoint}`, { reason: 'key_scope_denied' });
  }
  if (!catalog.allows(scope, model)) {
    throw new DomainError('forbidden', `This key's scope does not include the model ${model.id}`, { reason: 'key_scope_denied' });
  }
  if (!model.endpoints.includes(endpoint)) {
    throw new DomainError('bad_request', `The model ${model.id} is not served on ${endpoint}; use ${model.endpoints.join(' or ')}`, { reason: 'endpoint_not_supported_for_model' });
  }
  return model;
}
