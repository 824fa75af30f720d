import { writeFile } from 'node:fs/promises';
import { printGraphQLSchema } from '../../resolvers/print.js';

/** `npm run schema:emit`: rewrites schema/schema.graphql from the resolvers. */
const target = new URL('../../../schema/schema.graphql', import.meta.url);
await writeFile(target, await printGraphQLSchema());
process.stdout.write(`wrote ${target.pathname}\n`);
