import 'reflect-metadata';
import { loadConfigOrExit } from './config.js';
import { StartupError } from './shared/errors.js';
import { createLogger, exitAfterFlush, type Logger } from './shared/logging.js';
import cluster from 'node:cluster';
import { runCluster, STOP_MARGIN_MS } from './cluster.js';
import { startGateway, type RunningGateway } from './server.js';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = createLogger(config.logLevel);
  log.info({ nodeVersion: process.version, env: config.nodeEnv, pid: process.pid }, 'Baikal gateway starting');
  if (cluster.isPrimary && config.workers > 1) {
    try {
      await runCluster(config, log);
    } catch (error) {
      failedToStart(log, error);
    }
    return;
  }

  let running: RunningGateway | undefined;
  let shuttingDown = false;
  const shutdown = (signal: string) => {
    if (shuttingDown) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    log.info({ signal }, 'shutting down: draining requests');
    const started = Date.now();
    // Whatever holds the drain up, the stop ends shortly after the grace period.
    setTimeout(() => {
      log.error({ ms: Date.now() - started }, 'shutdown did not finish within the grace period: exiting');
      exitAfterFlush(log, 1);
    }, config.shutdownGraceMs + STOP_MARGIN_MS).unref();
    (running?.stop() ?? Promise.resolve()).then(
      () => {
        log.info({ ms: Date.now() - started }, 'shutdown complete');
        exitAfterFlush(log, 0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        exitAfterFlush(log, 1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    running = await startGateway(config, log);
  } catch (error) {
    return failedToStart(log, error);
  }
  if (shuttingDown) await running.stop();
}

/**
 * A start that failed: what the operator must fix (the database) is one line of ours on stderr and exit code 2,
 * like a configuration error; anything else is a fatal log entry and exit code 1.
 */
function failedToStart(log: Logger, error: unknown): void {
  if (error instanceof StartupError) {
    process.stderr.write(`baikal: ${error.message.replace(/\s*\n\s*/g, ' ')}\n`);
    return exitAfterFlush(log, 2);
  }
  log.fatal({ err: error }, 'failed to start');
  exitAfterFlush(log, 1);
}

void main();
