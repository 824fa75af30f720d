import { lexicographicSortSchema, printSchema } from 'graphql';
import { createPubSub } from '../src/shared/pubsub.js';
import { buildGraphQLSchema } from './schema.js';

const HEADER = '# Generated from the resolvers by `npm run schema:emit`. Do not edit; a test fails when it drifts.\n\n';

/** The committed SDL: sorted, so the file changes only when the schema does. */
export async function printGraphQLSchema(): Promise<string> {
  const schema = await buildGraphQLSchema(createPubSub());
  return `${HEADER}${printSchema(lexicographicSortSchema(schema))}\n`;
}
