import { parseArgs } from 'node:util';
import { DomainError } from '../shared/errors.js';
import { AdminBootstrap } from '../accounts/admin-bootstrap.js';
import { CatalogService } from '../catalog/catalog.service.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../shared/logging.js';
import { SharedState } from '../shared/redis.js';
import { routeCatalogMismatches } from '../upstreams/routes.js';
import { UpstreamsService } from '../upstreams/upstreams.service.js';
import { runCli } from './run-cli.js';

const USAGE = `usage: npm run admin -- create --email EMAIL --password PASSWORD [--username NAME]
       npm run admin -- promote --login USERNAME_OR_EMAIL
       npm run admin -- load-catalog   (replaces the stored catalog with BAIKAL_CATALOG, or the shipped default)
       npm run admin -- apply-upstreams [--prune]   (applies BAIKAL_CONFIG's upstreams to the stored ones; --prune deletes those it does not name)
       npm run admin -- rotate-secrets   (re-encrypts stored upstream secrets with BAIKAL_SECRET_KEY, reading old ones with BAIKAL_SECRET_KEYS_OLD)`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    email: { type: 'string' },
    password: { type: 'string' },
    username: { type: 'string' },
    login: { type: 'string' },
    prune: { type: 'boolean' },
  },
});

await runCli(async (db, config, log) => {
  const admin = new AdminBootstrap(db.orm);
  try {
    switch (positionals[0]) {
      case 'create': {
        const account = await admin.createAdmin({
          email: values.email ?? '',
          password: values.password ?? '',
          username: values.username ?? (values.email ?? '').split('@')[0] ?? '',
        });
        process.stdout.write(`admin account created: ${account.userId} (${account.email})\n`);
        return;
      }
      case 'promote': {
        const account = await admin.promote(values.login ?? '');
        process.stdout.write(`account ${account.userId} is now an admin\n`);
        return;
      }
      case 'load-catalog': {
        const catalog = new CatalogService({ orm: db.orm, catalogFile: config.catalogFile, log });
        await catalog.load();
        const loaded = await catalog.reloadFromFile();
        process.stdout.write(`catalog version ${loaded.version} loaded: ${loaded.models.size} models\n`);
        return;
      }
      case 'apply-upstreams': {
        if (!config.configFile) throw new Error('apply-upstreams applies the upstreams of the operator file: set BAIKAL_CONFIG');
        await withUpstreams(db, config, log, async (upstreams, catalog, shared) => {
          const applied = await upstreams.applyFile(config.operator.upstreams, { prune: values.prune === true });
          const list = (ids: string[]) => (ids.length ? ids.join(', ') : 'none');
          process.stdout.write(`upstreams applied from ${config.configFile}: created ${list(applied.created)}; updated ${list(applied.updated)}; deleted ${list(applied.pruned)}\n`);
          const { deadRoutes } = routeCatalogMismatches(upstreams.upstreams, catalog.snapshot);
          for (const route of deadRoutes) process.stdout.write(`warning: a route that serves nothing: ${route}\n`);
          if (!shared) process.stdout.write('running gateways take the change when they reload their upstreams (at once with REDIS_URL)\n');
        });
        return;
      }
      case 'rotate-secrets': {
        await withUpstreams(db, config, log, async (upstreams) => {
          const count = await upstreams.rotateSecrets();
          process.stdout.write(`re-encrypted ${count} stored upstream secret${count === 1 ? '' : 's'} with the current BAIKAL_SECRET_KEY\n`);
        });
        return;
      }
      default:
        throw new Error(USAGE);
    }
  } catch (error) {
    if (error instanceof DomainError && error.issues.length) {
      throw new Error(error.issues.map((issue) => `--${issue.loc.join('.')}: ${issue.msg}`).join('\n'));
    }
    throw error;
  }
});

/** The upstreams service as a gateway has it (the live catalog; the bus with REDIS_URL, so running gateways hear of a change). */
async function withUpstreams(db: Database, config: Config, log: Logger, task: (upstreams: UpstreamsService, catalog: CatalogService, shared?: SharedState) => Promise<void>): Promise<void> {
  const catalog = new CatalogService({ orm: db.orm, catalogFile: config.catalogFile, log });
  await catalog.load();
  let shared: SharedState | undefined;
  if (config.redisUrl) {
    const bus = new SharedState(config.redisUrl, log, config.redisPrefix);
    try {
      await bus.connect();
      shared = bus;
    } catch (error) {
      log.warn({ err: (error as Error).message }, 'Redis is not reachable: running gateways will not hear of this change at once');
      await bus.close();
    }
  }
  try {
    await task(new UpstreamsService({ orm: db.orm, settings: config.managedUpstreams, log, catalog, shared, env: config.environment }), catalog, shared);
  } finally {
    await shared?.close();
  }
}
