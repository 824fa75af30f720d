import cluster from 'node:cluster';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { AdminBootstrap } from './accounts/admin-bootstrap.js';
import { createGateway, type Gateway } from './app.js';
import type { Config } from './config.js';
import { databaseIdentity, migrate, openDatabase, type Database } from './db/database.js';
import { CatalogService } from './catalog/catalog.service.js';
import { demoModeApplies, demoUpstreams, startDemoMode, startDemoSimulator, type DemoSimulator } from './demo.js';
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
/** How often usage_events' partitions are made ahead and the retention applied (src/usage/usage-partitions.ts). */
const USAGE_PARTITIONS_MS = 60 * 60_000;

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
 * migrations, then readiness. A step that fails closes what the steps before it opened.
 */
export async function startGateway(configured: Config, log: Logger, clock: Clock = systemClock): Promise<RunningGateway> {
  const database = await openDatabase(configured, log);
  log.info({ database: database.description }, `using ${database.description}`);
  const opened = new OpenedSoFar();
  opened.add(() => database.close());
  const readiness = new Readiness();
  readiness.attach(database.orm);
  const shared = await connectShared(configured, readiness, log);
  const pubsub = createPubSub(shared && new SharedEventTarget(shared));
  const { config, demoSimulator } = await opened.attempt(() => demoConfiguration(configured, database, log));
  const tracing = await createTracing(config.environment, log);
  const services = createServices({ orm: database.orm, reads: database.reads, config, clock, pubsub, log, shared, tracing });
  const gateway = await opened.attempt(() => createGateway({ config, orm: database.orm, log, pubsub, services, readiness }));

  // A lone process listens at once, so /live and /ready answer while it migrates. A cluster worker
  // listens only when ready: the primary hands connections to every listening worker, and one still
  // starting would answer 503 to real traffic (the primary has migrated already).
  const listen = () => gateway.listen(config.port, config.host);
  let address = cluster.isWorker ? undefined : await opened.attempt(listen);
  opened.add(() => gateway.close());
  await opened.attempt(() => migrate(database.orm, log));
  // Before any request: records a dead process on this DATA_DIR and database had answered but not written.
  services.usage.openJournal(path.join(config.dataDir, 'usage-journal', await databaseIdentity(database.orm)));
  await services.catalog.load();
  await services.alerts.start();
  if (demoSimulator) opened.add(() => demoSimulator.close());
  const demo = demoSimulator ? await opened.attempt(() => startDemoMode(config, services, database.orm, log, demoSimulator)) : null;
  const upstreamsPoller = demoSimulator ? undefined : await opened.attempt(() => routeFromManagedUpstreams(config, services, log));
  readiness.migrated = true;
  address ??= await listen();
  services.video.start();
  services.status.start();
  services.webhooks.start();
  const housekeeping = startHousekeeping(services, log);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  log.info({ port: address.port, host: address.address, url }, `Baikal gateway ready on ${url}`);
  if (!cluster.isWorker || cluster.worker?.id === 1) void hintFirstAdmin(database, log);

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    housekeeping.stopTimers();
    clearInterval(upstreamsPoller);
    await gateway.close();
    await housekeeping.finished(); // a purge under way finishes before the database closes
    await stopServices(services, config.shutdownGraceMs, log);
    await tracing.shutdown();
    await shared?.close();
    await demo?.close();
    await database.close();
  };
  return { url, address, database, services, readiness, gateway, stop: () => (stopping ??= stop()) };
}

/** What a failed start must close: what it opened so far, the last opened first. */
class OpenedSoFar {
  private readonly closers: (() => Promise<unknown>)[] = [];

  add(close: () => Promise<unknown>): void {
    this.closers.push(close);
  }

  /** Runs a step; when it fails, closes everything opened so far and throws its error. */
  async attempt<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      for (const close of this.closers.reverse()) await close().catch(() => undefined);
      throw error;
    }
  }
}

/** Redis, when configured: limits, holds and events shared with the other processes. Unreachable is not fatal. */
async function connectShared(config: Config, readiness: Readiness, log: Logger): Promise<SharedState | undefined> {
  if (!config.redisUrl) return undefined;
  const shared = new SharedState(config.redisUrl, log, config.redisPrefix);
  try {
    await shared.connect();
  } catch (error) {
    // Money limits never depend on Redis; rate limits fall back per process until it answers.
    log.warn({ err: (error as Error).message }, 'Redis is not reachable at start: limits stay per process until it is');
  }
  readiness.shared = shared;
  return shared;
}

/**
 * Demo mode routes every model of the stored catalog to the simulator, and the services are built from
 * that configuration: so a demo process migrates and reads its catalog before it listens. Upstreams an
 * admin stored make it a real deployment: no demo then.
 */
async function demoConfiguration(configured: Config, database: Database, log: Logger): Promise<{ config: Config; demoSimulator: DemoSimulator | null }> {
  if (!demoModeApplies(configured)) return { config: configured, demoSimulator: null };
  await migrate(database.orm, log);
  if (await UpstreamsRepository.anyStored(database.orm)) return { config: configured, demoSimulator: null };
  const demoSimulator = await startDemoSimulator();
  try {
    const catalog = await new CatalogService({ orm: database.orm, catalogFile: configured.catalogFile, log }).load();
    return { config: { ...configured, upstreams: demoUpstreams(demoSimulator, catalog) }, demoSimulator };
  } catch (error) {
    await demoSimulator.close();
    throw error;
  }
}

/**
 * The periodic sweeps: expired holds (the table stays small; in-memory holds and idle accounts too), pending
 * invoices and bonus grants past their expiry, and expired stored responses and messenger links (already
 * invisible: the purge only reclaims their space; once at start, not awaited, then hourly; several processes
 * purging at once skip each other's rows); usage_events' partitions made ahead and old ones dropped
 * (USAGE_RETENTION_MONTHS), at start and hourly, by one process at a time.
 */
function startHousekeeping(services: Services, log: Logger): { stopTimers(): void; finished(): Promise<unknown> } {
  const holds = setInterval(() => {
    services.billing.expireHolds().catch((error: unknown) => log.warn({ err: error }, 'hold sweep failed'));
  }, 30_000).unref();
  const payments = setInterval(() => {
    services.payments.sweep().catch((error: unknown) => log.warn({ err: error }, 'payments sweep failed'));
  }, 30_000).unref();
  let purging: Promise<unknown> | null = null;
  const purgeExpiredRows = () => {
    purging ??= Promise.all([
      services.responses.purgeExpired().catch((error: unknown) => log.warn({ err: error }, 'stored responses purge failed')),
      services.identity.purgeExpiredLinks().catch((error: unknown) => log.warn({ err: error }, 'messenger links purge failed')),
    ]).finally(() => (purging = null));
  };
  purgeExpiredRows();
  const purges = setInterval(purgeExpiredRows, RESPONSES_PURGE_MS).unref();
  let maintaining: Promise<unknown> | null = null;
  const maintainPartitions = () => {
    maintaining ??= services.usagePartitions
      .maintain()
      .catch((error: unknown) => log.warn({ err: error }, 'usage partition maintenance failed'))
      .finally(() => (maintaining = null));
  };
  maintainPartitions();
  const partitions = setInterval(maintainPartitions, USAGE_PARTITIONS_MS).unref();
  return {
    stopTimers: () => [holds, payments, purges, partitions].forEach(clearInterval),
    finished: async () => Promise.all([purging, maintaining]),
  };
}

/** The services' own stop, in order: nothing running, then every finished request's usage written. */
async function stopServices(services: Services, graceMs: number, log: Logger): Promise<void> {
  await services.video.stop();
  await services.status.stop();
  await services.webhooks.stop();
  await services.keys.flushLastUsed();
  // Every finished request's usage and ledger row is written before the database goes away.
  await services.usage.flush(Date.now() + graceMs).then(
    () => services.usage.closeJournal(),
    (error: unknown) => log.error({ err: error, pending: services.usage.pending }, 'usage records could not be written at shutdown; the next start on this DATA_DIR writes them'),
  );
  // The last batch's alerts are evaluated (and sent) before the mailer and the database close.
  await services.alerts.stop();
  services.health.close();
  await services.upstreams.close();
  services.identity.close();
  services.limiter.close?.();
  services.wallets.stop?.();
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
