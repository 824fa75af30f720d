import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generate, loadCodegenConfig } from '@graphql-codegen/cli';
import { printGraphQLSchema } from '../../resolvers/print.js';

describe('committed GraphQL artefacts', () => {
  it('schema/schema.graphql equals the schema the resolvers emit (run `npm run schema:emit`)', async () => {
    const committed = await readFile(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(await printGraphQLSchema());
  });

  it('test/graphql/generated.ts equals what codegen.yml generates (run `npm run codegen`)', async () => {
    const root = new URL('../..', import.meta.url).pathname;
    const { config } = await loadCodegenConfig({ configFilePath: `${root}codegen.yml` });
    const outputs = await generate({ ...config, cwd: root, silent: true }, false);
    const committed = await readFile(new URL('../graphql/generated.ts', import.meta.url), 'utf8');
    expect(outputs).toHaveLength(1);
    expect(outputs[0]!.content).toBe(committed);
  });
});
