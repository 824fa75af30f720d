import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { AdminBootstrap } from './accounts/admin-bootstrap.js';
import { createGateway, type Gateway } from './app.js';
import type { Config } from './config.js';
import { migrate, openDatabase, type Database } from './db/database.js';
import { CatalogService } from './catalog/catalog.service.js';
import { demoModeApplies, demoUpstreams, startDemoMode, startDemoSimulator, type DemoMode, type DemoSimulator } from './demo.js';
import { Readiness } from './readiness.js';
import { routeCatalogMismatches } from './upstreams/routes.js';
import { createServices, type Services } from './services.js';
import { createTracing } from './shared/tracing.js';
import { UpstreamsRepository } from './upstreams/upstreams.repository.js';
import { systemClock, type Clock } from './shared/clock.js';
import type { Logger } from './shared/logging.js';
import { StartupError } from './shared/errors.js';
import { createPubSub } from './shared/pubsub.js';
import { SharedEventTarget, SharedState } from './shared/redis.js';

/** How often expired stored responses are purged. */
const RESPONSES_PURGE_MS = 60 * 60_000;

export interface RunningGateway {
  url: string;
  address: AddressInfo;
  database: Database;
  services: Services;
  readiness: Readiness;
  gateway: Gateway;
  /** Graceful stop: drain requests, close the database (and the embedded server). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Boots one gateway process: database, HTTP listener (so /live and /ready answer during start-up),
 * migrations, then readiness.
 */
export async function startGateway(configured: Config, log: Logger, clock: Clock = systemClock): Promise<RunningGateway> {
  const database = await openDatabase(configured, log);
  log.info({ database: database.description }, `using ${database.description}`);
  const readiness = new Readiness();
  readiness.attach(database.orm);
  let shared: SharedState | undefined;
  if (configured.redisUrl) {
    shared = new SharedState(configured.redisUrl, log, configured.redisPrefix);
    try {
      await shared.connect();
    } catch (error) {
      // Money limits never depend on Redis; rate limits fall back per process until it answers.
      log.warn({ err: (error as Error).message }, 'Redis is not reachable at start: limits stay per process until it is');
    }
    readiness.shared = shared;
  }
  const pubsub = createPubSub(shared && new SharedEventTarget(shared));
  let demoSimulator: DemoSimulator | null = null;
  let config = configured;
  if (demoModeApplies(configured)) {
    // Demo mode routes every model of the stored catalog to the simulator, and the services are built
    // from that configuration: so a demo process migrates and reads its catalog before it listens.
    // Upstreams an admin stored make it a real deployment: no demo then.
    try {
      await migrate(database.orm, log);
      if (!(await UpstreamsRepository.anyStored(database.orm))) {
        demoSimulator = await startDemoSimulator();
        const catalog = await new CatalogService({ orm: database.orm, catalogFile: configured.catalogFile, log }).load();
        config = { ...configured, upstreams: demoUpstreams(demoSimulator, catalog) };
      }
    } catch (error) {
      await demoSimulator?.close();
      await database.close();
      throw error;
    }
  }
  const tracing = await createTracing(config.environment, log);
  const services = createServices({ orm: database.orm, config, clock, pubsub, log, shared, tracing });

  let gateway: Gateway;
  try {
    gateway = await createGateway({ config, orm: database.orm, log, pubsub, services, readiness });
  } catch (error) {
    await database.close();
    throw error;
  }
  // A lone process listens at once, so /live and /ready answer while it migrates. A cluster worker
  // listens only when ready: the primary hands connections to every listening worker, and one still
  // starting would answer 503 to real traffic (the primary has migrated already).
  const listen = () => gateway.listen(config.port, config.host);
  let address: AddressInfo | undefined;
  if (!cluster.isWorker) {
    address = await listen().catch(async (error: unknown) => {
      await database.close();
      throw error;
    });
  }
  try {
    await migrate(database.orm, log);
  } catch (error) {
    await gateway.close();
    await database.close();
    throw error;
  }
  await services.catalog.load();
  let demo: DemoMode | null = null;
  let upstreamsPoller: NodeJS.Timeout | undefined;
  if (demoSimulator) {
    try {
      demo = await startDemoMode(config, services, database.orm, log, demoSimulator);
    } catch (error) {
      await demoSimulator.close();
      await gateway.close();
      await database.close();
      throw error;
    }
  } else {
    try {
      upstreamsPoller = await routeFromManagedUpstreams(config, services, log);
    } catch (error) {
      await gateway.close();
      await database.close();
      throw error;
    }
  }
  readiness.migrated = true;
  address ??= await listen();
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  services.video.start();
  services.status.start();
  // Holds past their expiry already stop counting; the sweep closes them so the table stays small.
  const sweeper = setInterval(() => {
    // Also drops in-memory holds past their expiry and idle accounts.
    services.billing.expireHolds().catch((error: unknown) => log.warn({ err: error }, 'hold sweep failed'));
  }, 30_000).unref();
  // Pending invoices past their expiry and bonus grants past theirs.
  const paymentsSweeper = setInterval(() => {
    services.payments.sweep().catch((error: unknown) => log.warn({ err: error }, 'payments sweep failed'));
  }, 30_000).unref();
  // Expired stored responses and messenger links are already invisible; the purge only reclaims their space. Once at start
  // (not awaited: start-up does not wait on it), then hourly. Several processes purging at once skip each other's rows.
  let purging: Promise<unknown> | null = null;
  const purgeExpiredRows = () => {
    purging ??= Promise.all([
      services.responses.purgeExpired().catch((error: unknown) => log.warn({ err: error }, 'stored responses purge failed')),
      services.identity.purgeExpiredLinks().catch((error: unknown) => log.warn({ err: error }, 'messenger links purge failed')),
    ]).finally(() => (purging = null));
  };
  purgeExpiredRows();
  const responsesSweeper = setInterval(purgeExpiredRows, RESPONSES_PURGE_MS).unref();
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  log.info({ port: address.port, host: address.address, url }, `Baikal gateway ready on ${url}`);
  if (!cluster.isWorker || cluster.worker?.id === 1) void hintFirstAdmin(database, log);

  let stopping: Promise<void> | undefined;
  return {
    url,
    address,
    database,
    services,
    readiness,
    gateway,
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(sweeper);
        clearInterval(upstreamsPoller);
        clearInterval(paymentsSweeper);
        clearInterval(responsesSweeper);
        await gateway.close();
        await purging; // a purge under way finishes before the database closes
        await services.video.stop();
        await services.status.stop();
        await services.keys.flushLastUsed();
        // Every finished request's usage and ledger row is written before the database goes away.
        await services.usage.flush(Date.now() + config.shutdownGraceMs).catch((error: unknown) => {
          log.error({ err: error, pending: services.usage.pending }, 'usage records could not be written at shutdown');
        });
        services.health.close();
        await tracing.shutdown();
        await services.upstreams.close();
        services.identity.close();
        services.limiter.close?.();
        services.wallets.stop?.();
        await shared?.close();
        await demo?.close();
        await database.close();
      })()),
  };
}

/**
 * Routing follows the stored upstreams (seeded from the operator file on the first start): every change an
 * admin makes here or in another process (the bus), or a command makes (the poll), replaces the route table
 * and teaches the redactor the new secrets. Answers the poller, which the stop clears.
 */
async function routeFromManagedUpstreams(config: Config, services: Services, log: Logger): Promise<NodeJS.Timeout> {
  const managed = services.managedUpstreams;
  managed.onChange((upstreams) => {
    services.upstreams.redactor.add(managed.secrets());
    services.routes.replace(upstreams);
  });
  const upstreams = await managed.load();
  if (!upstreams.length) {
    if (config.nodeEnv === 'production') {
      throw new StartupError('No upstreams configured: in production BAIKAL_CONFIG must name at least one upstream, or one must be stored (`npm run admin -- apply-upstreams`; see docs/configuration.md); outside production the built-in simulator is used');
    }
    log.warn('no upstreams configured: inference requests will answer 503 no_route');
  } else {
    log.info({ upstreams: upstreams.map((upstream) => upstream.id) }, 'upstream routes loaded');
    const { deadRoutes, unrouted } = routeCatalogMismatches(upstreams, services.catalog.snapshot);
    if (deadRoutes.length) log.warn({ routes: deadRoutes }, `routes that serve nothing (a typo in BAIKAL_CONFIG or the catalog?): ${deadRoutes.join('; ')}`);
    if (unrouted.length) log.warn({ models: unrouted }, `catalog models with no upstream route answer 503 no_route: ${unrouted.join(', ')}`);
  }
  // Changes made by a command (no bus without Redis) are seen within the second.
  return setInterval(() => void managed.poll().catch((error: unknown) => log.warn({ err: error }, 'could not read the stored upstreams')), 1_000).unref();
}

/** A new deployment has no admin, and the cabinet's admin pages need one: say how to make it (once per start). */
async function hintFirstAdmin(database: Database, log: Logger): Promise<void> {
  try {
    if (!(await new AdminBootstrap(database.orm).hasAdmin())) log.warn('no admin account yet: `npm run admin -- create --email EMAIL --password PASSWORD` makes one (the cabinet\'s admin pages need it)');
  } catch (error) {
    log.warn({ err: error }, 'could not check for an admin account');
  }
}
