import type { ServiceDeps } from '../services.js';
import type { RouteTable } from '../inference/routes.js';
import type { UpstreamClient } from '../inference/upstream-client.js';
import type { CatalogService } from '../catalog/catalog.service.js';

/** The service-status monitor (issue 7): filled in by its own change. */
export class StatusService {
  constructor(protected readonly deps: ServiceDeps & { catalog: CatalogService; routes: RouteTable; upstreams: UpstreamClient }) {}

  start(): void {}

  async stop(): Promise<void> {}
}
