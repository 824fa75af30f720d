import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StartupError } from '../../src/shared/errors.js';
import { createLogger } from '../../src/shared/logging.js';
import { CredentialVault, KEY_FILE, lastCharacters, parseSecretKey, VaultError } from '../../src/upstreams/vault.js';

const log = createLogger('silent');
const ROW = { upstreamId: 'primary', credentialId: '3b0d7a52-4c55-4c59-9d52-1b9e7c1f2a10' };
const SECRET = 'sk-live-canary-0123456789abcdef';
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'baikal-vault-'));
  dirs.push(dir);
  return dir;
}

function vault(env: Record<string, string>, options: { production?: boolean; dataDir?: string } = {}) {
  return new CredentialVault({ env, dataDir: options.dataDir ?? tempDir(), production: options.production ?? false, log });
}

const hexKey = () => randomBytes(32).toString('hex');

/** Replaces one dot-separated part of a sealed value with the same bytes, one bit flipped. */
function flipBit(sealed: string, part: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[part]!, 'base64url');
  bytes[0] = bytes[0]! ^ 1;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('credential vault', () => {
  it('seals into v1.<keyId>.<iv>.<ciphertext>.<tag> without the plaintext, and opens it again', () => {
    const v = vault({ BAIKAL_SECRET_KEY: hexKey() });
    const sealed = v.seal(SECRET, ROW);
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(sealed).not.toContain(SECRET);
    expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64url'));
    expect(v.open(sealed, ROW)).toBe(SECRET);
    // A fresh IV each time: the same secret never seals to the same text.
    expect(v.seal(SECRET, ROW)).not.toBe(sealed);
  });

  it('refuses to open with another key', () => {
    const sealed = vault({ BAIKAL_SECRET_KEY: hexKey() }).seal(SECRET, ROW);
    const error = (() => {
      try {
        vault({ BAIKAL_SECRET_KEY: hexKey() }).open(sealed, ROW);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(VaultError);
    expect((error as VaultError).reason).toBe('unknown_key');
    expect((error as Error).message).not.toContain(SECRET);
  });

  it('refuses a tampered ciphertext, tag or IV, and a ciphertext moved to another row', () => {
    const v = vault({ BAIKAL_SECRET_KEY: hexKey() });
    const sealed = v.seal(SECRET, ROW);
    for (const part of [2, 3, 4]) expect(() => v.open(flipBit(sealed, part), ROW), `part ${part}`).toThrow(VaultError);
    expect(() => v.open(sealed, { ...ROW, credentialId: '00000000-0000-4000-8000-000000000000' })).toThrow(/cannot be decrypted/);
    expect(() => v.open(sealed, { ...ROW, upstreamId: 'other' })).toThrow(/cannot be decrypted/);
    expect(() => v.open('v2' + sealed.slice(2), ROW)).toThrow(/not a sealed secret/);
    expect(() => v.open(sealed.split('.').slice(0, 4).join('.'), ROW)).toThrow(/not a sealed secret/);
    expect(v.open(sealed, ROW)).toBe(SECRET);
  });

  it('rotates: a former key in BAIKAL_SECRET_KEYS_OLD opens what it sealed; new seals use the current key', () => {
    const before = hexKey();
    const after = randomBytes(32).toString('base64');
    const sealedBefore = vault({ BAIKAL_SECRET_KEY: before }).seal(SECRET, ROW);
    const rotated = vault({ BAIKAL_SECRET_KEY: after, BAIKAL_SECRET_KEYS_OLD: ` ${hexKey()}, ${before} ` });
    expect(rotated.isCurrent(sealedBefore)).toBe(false);
    expect(rotated.open(sealedBefore, ROW)).toBe(SECRET);
    const resealed = rotated.seal(rotated.open(sealedBefore, ROW), ROW);
    expect(rotated.isCurrent(resealed)).toBe(true);
    // Only the new key is needed afterwards.
    expect(vault({ BAIKAL_SECRET_KEY: after }).open(resealed, ROW)).toBe(SECRET);
    expect(() => vault({ BAIKAL_SECRET_KEY: after }).open(sealedBefore, ROW)).toThrow(VaultError);
  });

  it('reads keys as 64 hex digits or 32 bytes of base64 (standard or URL-safe, padded or not), and refuses anything else naming the variable, never the value', () => {
    const key = randomBytes(32);
    for (const text of [key.toString('hex'), key.toString('hex').toUpperCase(), key.toString('base64'), key.toString('base64').replace(/=$/, ''), key.toString('base64url')]) {
      expect(parseSecretKey(text, 'BAIKAL_SECRET_KEY').equals(key), text).toBe(true);
    }
    const wrong = ['too-short-secret-value', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), `${key.toString('hex')}0`, 'z'.repeat(64)];
    for (const text of wrong) {
      let error: unknown;
      try {
        new CredentialVault({ env: { BAIKAL_SECRET_KEY: text }, dataDir: tempDir(), production: true, log });
      } catch (e) {
        error = e;
      }
      expect(error, text).toBeInstanceOf(StartupError);
      expect((error as Error).message).toMatch(/^BAIKAL_SECRET_KEY must be 32 bytes/);
      expect((error as Error).message).not.toContain(text);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(() => vault({ BAIKAL_SECRET_KEY: hexKey(), BAIKAL_SECRET_KEYS_OLD: `${hexKey()},nope` })).toThrow(/^BAIKAL_SECRET_KEYS_OLD \(entry 2\) must be 32 bytes/);
  });

  it('outside production with no key, generates one into DATA_DIR/secret.key (mode 0600) once, and later processes use it', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const first = vault({}, { dataDir });
    const sealed = first.seal(SECRET, ROW);
    const file = path.join(dataDir, KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = readFileSync(file, 'utf8');
    expect(written.trim()).toMatch(/^[0-9a-f]{64}$/);
    const second = vault({}, { dataDir });
    expect(second.open(sealed, ROW)).toBe(SECRET);
    expect(readFileSync(file, 'utf8')).toBe(written);
    // The generated key is an ordinary key: given as BAIKAL_SECRET_KEY it opens the same values.
    expect(vault({ BAIKAL_SECRET_KEY: written.trim() }).open(sealed, ROW)).toBe(SECRET);
  });

  it('makes no key file until a secret is sealed or opened', () => {
    const dataDir = tempDir();
    const v = vault({}, { dataDir });
    expect(() => statSync(path.join(dataDir, KEY_FILE))).toThrow();
    expect(v.canSeal).toBe(true);
    expect(statSync(path.join(dataDir, KEY_FILE)).isFile()).toBe(true);
  });

  it('refuses a damaged key file naming the file', () => {
    const dataDir = tempDir();
    writeFileSync(path.join(dataDir, KEY_FILE), 'not a key\n');
    expect(() => vault({}, { dataDir }).seal(SECRET, ROW)).toThrow(new RegExp(`^${path.join(dataDir, KEY_FILE).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} must be 32 bytes`));
  });

  it('in production without BAIKAL_SECRET_KEY, refuses to seal, writes no key file, and opens nothing', () => {
    const dataDir = tempDir();
    const sealed = vault({ BAIKAL_SECRET_KEY: hexKey() }).seal(SECRET, ROW);
    const v = vault({}, { dataDir, production: true });
    expect(v.canSeal).toBe(false);
    expect(() => v.seal(SECRET, ROW)).toThrow(expect.objectContaining({ reason: 'no_key', message: expect.stringMatching(/^BAIKAL_SECRET_KEY is not set/) }));
    expect(() => v.open(sealed, ROW)).toThrow(expect.objectContaining({ reason: 'unknown_key' }));
    expect(() => statSync(path.join(dataDir, KEY_FILE))).toThrow();
  });

  it('shows at most the last four characters of a secret, and never more than a quarter of a short one', () => {
    expect(lastCharacters('sk-0123456789abcdef')).toBe('cdef');
    expect(lastCharacters('abcdefgh')).toBe('gh');
    expect(lastCharacters('abc')).toBe('');
  });
});
