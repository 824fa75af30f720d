import { readFileSync } from 'node:fs';

/** What the Responses tests (test/unit/openai-responses-*.test.ts) share. */

export const fixture = (name: string) => readFileSync(new URL(`../fixtures/openai-responses/${name}`, import.meta.url), 'utf8');
export const json = <T>(name: string): T => JSON.parse(fixture(name)) as T;
export const who = { id: 'ours1', model: 'gen-5.6-luna', created: 1_795_325_000 };
