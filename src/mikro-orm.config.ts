import { Migrator } from '@mikro-orm/migrations';
import { defineConfig } from '@mikro-orm/postgresql';
import { migrationsList } from '../migrations/index.js';
import { entities } from './entities.js';
import type { Logger } from './shared/logging.js';

export function ormConfig(clientUrl: string, log?: Logger) {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: {
      migrationsList,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      emit: 'ts',
      path: 'migrations',
      // Migrations are hand-written SQL; no schema snapshot files are wanted (tests would write one per database).
      snapshot: false,
    },
    // Requests share no identity map; every unit of work forks its own EntityManager.
    allowGlobalContext: false,
    pool: { min: 0, max: 10 },
    debug: false,
    logger: (message: string) => log?.debug({ orm: message }, 'orm'),
  });
}
