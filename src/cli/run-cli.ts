import 'reflect-metadata';
import { loadConfigOrExit, type Config } from '../config.js';
import { migrate, openDatabase, type Database } from '../db/database.js';
import { createLogger, type Logger } from '../shared/logging.js';

/** Runs a command-line task against the configured database, migrated first; exit code 0/1/2. */
export async function runCli(task: (db: Database, config: Config, log: Logger) => Promise<void>): Promise<void> {
  const config = loadConfigOrExit();
  const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const db = await openDatabase(config, log).catch((error: unknown) => {
    // The database could not be opened (the embedded one's failures say what to fix): one line, exit 2.
    process.stderr.write(`baikal: ${(error as Error).message.replace(/\s*\n\s*/g, ' ')}\n`);
    process.exit(2);
  });
  let code = 0;
  try {
    await migrate(db.orm, log);
    await task(db, config, log);
  } catch (error) {
    process.stderr.write(`baikal: ${(error as Error).message}\n`);
    code = 1;
  } finally {
    await db.close();
  }
  process.exit(code);
}
