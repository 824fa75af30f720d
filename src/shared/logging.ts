import { AsyncLocalStorage } from 'node:async_hooks';
import { fstatSync } from 'node:fs';
import { Socket } from 'node:net';
import { pino, type Logger } from 'pino';

export type { Logger };

/** The request a piece of work belongs to; every log line written inside it carries its id. */
export const requestScope = new AsyncLocalStorage<{ requestId: string }>();

/** Lines held for a slow log reader before new ones are dropped. */
const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024;

/**
 * Standard output for the log. A pipe (the usual case under a supervisor, `npm start`, `| tee`) is
 * written through a non-blocking socket on the event loop: a reader that went away (EPIPE) or stopped
 * reading (a full pipe) costs log lines, never a stop or a request. (pino's default writes fd 1 from the
 * thread pool or synchronously; on a full pipe that write blocks, and the process can then not even exit.)
 * Lines are buffered up to MAX_BUFFERED_LOG_BYTES, then dropped until the reader catches up. Files and
 * terminals take writes as they come and keep pino's own destination.
 */
let stdoutPipe: pino.DestinationStream | null | undefined;

function stdoutDestination(): pino.DestinationStream | undefined {
  // One socket per process: a second handle on fd 1 would close it for the first when collected.
  if (stdoutPipe === undefined) stdoutPipe = pipeDestination() ?? null;
  return stdoutPipe ?? undefined;
}

function pipeDestination(): pino.DestinationStream | undefined {
  let pipe = false;
  try {
    const stat = fstatSync(1);
    pipe = stat.isFIFO() || stat.isSocket();
  } catch {
    return undefined;
  }
  if (!pipe) return undefined;
  const socket = new Socket({ fd: 1, readable: false, writable: true });
  socket.unref();
  let broken = false;
  socket.on('error', () => {
    broken = true;
  });
  return {
    write(line: string) {
      if (!broken && socket.writableLength < MAX_BUFFERED_LOG_BYTES) socket.write(line);
    },
    // pino's logger.flush(cb) lands here: called back once everything buffered is written (or cannot be).
    flush(callback: (error?: Error) => void) {
      if (broken || socket.writableLength === 0) return callback();
      socket.once('drain', () => callback());
    },
  } as pino.DestinationStream;
}

/** A silent logger writes nothing and holds no handle on standard output. */
const SILENT: pino.DestinationStream = { write: () => undefined };

/** Writes out what the log holds (waiting at most `withinMs`), then exits with `code`. */
export function exitAfterFlush(log: Logger, code: number, withinMs = 1_000): void {
  const exit = () => process.exit(code);
  setTimeout(exit, withinMs).unref();
  try {
    log.flush(exit);
  } catch {
    exit();
  }
}

/**
 * Structured JSON logs. Secrets never reach them: authorization headers, cookies, passwords and
 * tokens are redacted wherever they appear in a logged object.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'baikal' },
      mixin: () => requestScope.getStore() ?? {},
      redact: {
        paths: [
          'password',
          '*.password',
          'token',
          '*.token',
          'sessionToken',
          '*.sessionToken',
          'headers.authorization',
          'headers.cookie',
          'headers["x-api-key"]',
        ],
        censor: '[redacted]',
      },
    },
    (destination as pino.DestinationStream | undefined) ?? (level === 'silent' ? SILENT : stdoutDestination()),
  );
}
