import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generate, loadCodegenConfig } from '@graphql-codegen/cli';
import { printGraphQLSchema } from '../../resolvers/print.js';

describe('committed GraphQL artefacts', () => {
  it('schema/schema.graphql equals the schema the resolvers emit (run `npm run schema:emit`)', async () => {
    const committed = await readFile(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(await printGraphQLSchema());
  });

  it('test/graphql/generated.ts and the cabinet\'s web/src/gql equal what codegen.yml generates (run `npm run codegen`)', async () => {
    const root = new URL('../..', import.meta.url).pathname;
    const { config } = await loadCodegenConfig({ configFilePath: `${root}codegen.yml` });
    const outputs = await generate({ ...config, cwd: root, silent: true }, false);
    const relative = (filename: string) => path.relative(root, path.resolve(root, filename));
    expect(outputs.map((o: { filename: string }) => relative(o.filename)).sort()).toEqual(['test/graphql/generated.ts', 'web/src/gql/gql.ts', 'web/src/gql/graphql.ts', 'web/src/gql/index.ts']);
    for (const output of outputs) {
      expect(output.content, relative(output.filename)).toBe(await readFile(path.resolve(root, output.filename), 'utf8'));
    }
  });
});
