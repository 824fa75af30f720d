import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';
import { migrate, openDatabase } from './db/database.js';
import { demoModeApplies, startDemoSimulator } from './demo.js';
import { serveClusterMetrics } from './metrics.js';
import { exitAfterFlush, type Logger } from './shared/logging.js';

/** How long past SHUTDOWN_GRACE_SECONDS a stop may take before a process is ended anyway. */
export const STOP_MARGIN_MS = 2_000;

/**
 * WORKERS > 1: this process becomes the primary. It opens the database once (starting the embedded
 * PostgreSQL when DATABASE_URL is unset, so the workers share one), applies migrations before any
 * worker starts (they would otherwise race), then forks the workers onto one port and replaces any
 * that dies. SIGTERM/SIGINT drain every worker, then stop the database.
 */
export async function runCluster(config: Config, log: Logger): Promise<void> {
  const database = await openDatabase(config, log);
  try {
    await migrate(database.orm, log);
  } finally {
    await database.orm.close(true);
  }
  // Demo mode: one simulator for all workers, here (see startDemoSimulator).
  const simulator = demoModeApplies(config) ? await startDemoSimulator() : null;
  const env = { DATABASE_URL: database.url, ...simulator?.env };
  let stopping = false;
  let everListening = false;
  const fork = (): Worker => cluster.fork(env);
  cluster.on('listening', () => (everListening = true));
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    // Exit code 2 before any worker has served: a start the operator must fix (the port taken, the database
    // refusing us), said on its own line already; starting new workers would only repeat it every second.
    if (code === 2 && !everListening) {
      log.error({ workerPid: worker.process.pid }, 'a worker could not start (its reason is the line starting "baikal:"): stopping');
      stop('SIGTERM', 2);
      return;
    }
    log.error({ workerPid: worker.process.pid, code, signal }, 'worker died: starting a new one');
    setTimeout(fork, 1_000).unref();
  });
  serveClusterMetrics();
  for (let i = 0; i < config.workers; i++) fork();
  log.info({ workers: config.workers, pid: process.pid }, `cluster primary started ${config.workers} workers`);

  const stop = (signal: NodeJS.Signals, exitCode = 0) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'cluster shutting down: draining workers');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
    const exited = workers.map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
    for (const worker of workers) worker.process.kill('SIGTERM');
    // Each worker ends itself shortly after the grace period; one that does not is killed a little later.
    setTimeout(() => {
      for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, config.shutdownGraceMs + 2 * STOP_MARGIN_MS).unref();
    void Promise.all(exited)
      .then(() => simulator?.close())
      .then(() => database.close())
      .then(
        () => exitAfterFlush(log, exitCode),
        (error: unknown) => {
          log.error({ err: error }, 'cluster shutdown failed');
          exitAfterFlush(log, 1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
