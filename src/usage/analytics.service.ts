import type { ServiceDeps } from '../services.js';
import type { CatalogService } from '../catalog/catalog.service.js';

/** Usage analytics and the daily leaderboard (issue 7). */
export class AnalyticsService {
  constructor(protected readonly deps: ServiceDeps & { catalog: CatalogService }) {}
}
