import type { MikroORM } from '@mikro-orm/postgresql';
import { AccountsService } from './accounts/accounts.service.js';
import type { Config } from './config.js';
import type { Clock } from './shared/clock.js';
import type { Logger } from './shared/logging.js';
import type { PubSub } from './shared/pubsub.js';

/** The domain services, one instance each per process, shared by every transport. */
export interface Services {
  accounts: AccountsService;
}

export interface ServiceDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  pubsub: PubSub;
  log: Logger;
}

export function createServices(deps: ServiceDeps): Services {
  return {
    accounts: new AccountsService(deps),
  };
}
