import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

export type { Logger };

/** The request a piece of work belongs to; every log line written inside it carries its id. */
export const requestScope = new AsyncLocalStorage<{ requestId: string }>();

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
    destination as pino.DestinationStream | undefined,
  );
}
