import type { MikroORM } from '@mikro-orm/postgresql';
import { AccountsService } from './accounts/accounts.service.js';
import { BillingService } from './billing/billing.service.js';
import { CatalogService } from './catalog/catalog.service.js';
import { KeysService } from './keys/keys.service.js';
import type { Config } from './config.js';
import type { Clock } from './shared/clock.js';
import type { Logger } from './shared/logging.js';
import type { PubSub } from './shared/pubsub.js';

/** The domain services, one instance each per process, shared by every transport. */
export interface Services {
  accounts: AccountsService;
  catalog: CatalogService;
  keys: KeysService;
  billing: BillingService;
}

export interface ServiceDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  pubsub: PubSub;
  log: Logger;
}

export function createServices(deps: ServiceDeps): Services {
  const catalog = new CatalogService(deps);
  return {
    accounts: new AccountsService(deps),
    catalog,
    keys: new KeysService({ ...deps, catalog }),
    billing: new BillingService(deps),
  };
}
