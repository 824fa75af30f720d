import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/logging.js';
import { UsageJournal } from '../../src/usage/usage-journal.js';

const log = createLogger('silent');
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-journal-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A pid no process has now: one that ran and exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

const lines = async (file: string) => (await readFile(path.join(dir, file), 'utf8')).split('\n').filter(Boolean);

describe('the usage journal', () => {
  it('keeps records until they are written, then empties its file; a clean close leaves nothing', async () => {
    const journal = UsageJournal.open(dir, log);
    journal.append('["a"]');
    journal.append('["b"]');
    const [file] = await readdir(dir);
    expect(await lines(file!)).toEqual(['["a"]', '["b"]']);
    journal.committed(1);
    expect(await lines(file!)).toEqual(['["a"]', '["b"]']); // a file goes only when all of it is written
    journal.committed(1);
    expect(await lines(file!)).toEqual([]);
    journal.append('["c"]');
    journal.committed(1);
    journal.close();
    expect(await readdir(dir)).toEqual([]);
  });

  it("takes a dead process's records (all but a last line cut mid-write), keeps them until written, and leaves a live process's files alone", async () => {
    const dead = deadPid();
    await writeFile(path.join(dir, `${dead}-0000aaaa-1.jsonl`), '["x1"]\n["x2"]\n["x3-cut');
    await writeFile(path.join(dir, `${dead}-0000aaaa-2.jsonl`), '["y1"]\n');
    const live = `${process.pid}-0000bbbb-1.jsonl`;
    await writeFile(path.join(dir, live), '["live"]\n');

    const journal = UsageJournal.open(dir, log);
    const taken: string[] = [];
    const recovered = journal.recover((json) => {
      taken.push(json);
      journal.append(json);
    });
    expect(recovered).toBe(3);
    expect(taken.sort()).toEqual(['["x1"]', '["x2"]', '["y1"]']);
    const files = await readdir(dir);
    expect(files).toContain(live);
    expect(files.filter((name) => name.startsWith(String(dead)))).toEqual([]);
    // They are this process's now: in its file until written.
    const own = files.filter((name) => name !== live);
    expect(own).toHaveLength(1);
    expect((await lines(own[0]!)).sort()).toEqual(['["x1"]', '["x2"]', '["y1"]']);

    // Another process starting now finds nothing to take (this one is alive).
    const other = UsageJournal.open(dir, log);
    expect(other.recover(() => undefined)).toBe(0);
    other.close();
    journal.committed(3);
    journal.close();
    expect(await readdir(dir)).toEqual([live]);
  });

  it('starts a new file past its size and drops each file once every record in it is written', async () => {
    const journal = UsageJournal.open(dir, log);
    for (let i = 0; i < 20_001; i++) journal.append(`[${i}]`);
    expect(await readdir(dir)).toHaveLength(2);
    journal.committed(20_000);
    const [left] = await readdir(dir);
    expect(await lines(left!)).toEqual(['[20000]']);
    journal.committed(1);
    journal.close();
    expect(await readdir(dir)).toEqual([]);
  });
});
