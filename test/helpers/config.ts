import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Writes an operator configuration (BAIKAL_CONFIG) to a fresh temporary file and returns its path. */
export function operatorConfigFile(config: object): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'baikal-config-')), 'baikal.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Removes a file from `operatorConfigFile` with its temporary directory. */
export function removeOperatorConfigFile(file: string): void {
  rmSync(path.dirname(file), { recursive: true, force: true });
}
