import { runCli } from './run-cli.js';

/** `npm run migrate`: applies pending migrations (the gateway also does this at boot). */
await runCli(async () => {
  process.stdout.write('migrations applied; the schema is up to date\n');
});
