import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { StartupError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';

/** Why a secret could not be sealed or opened. Its message never holds a secret or a key. */
export class VaultError extends Error {
  override name = 'VaultError';

  constructor(
    message: string,
    /** `no_key`: sealing needs BAIKAL_SECRET_KEY (production); `unknown_key`, `malformed`, `rejected`: opening failed. */
    readonly reason: 'no_key' | 'unknown_key' | 'malformed' | 'rejected',
  ) {
    super(message);
  }
}

/** The row a sealed secret belongs to: part of the authenticated data, so a ciphertext copied to another row fails to open. */
export interface SealContext {
  upstreamId: string;
  credentialId: string;
}

interface VaultKey {
  /** The first 8 hex digits of the key's SHA-256: names the key in a sealed value without revealing it. */
  id: string;
  key: Buffer;
}

export interface VaultOptions {
  env: NodeJS.ProcessEnv;
  /** Where a development key is generated when BAIKAL_SECRET_KEY is unset (never in production). */
  dataDir: string;
  production: boolean;
  log: Logger;
}

const FORMAT = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_FILE = 'secret.key';

/**
 * Seals upstream credentials for storage: AES-256-GCM under BAIKAL_SECRET_KEY, as
 * `v1.<keyId>.<iv>.<ciphertext>.<tag>` (base64url), with the credential's row (upstream id and credential id) as
 * additional authenticated data. Former keys (BAIKAL_SECRET_KEYS_OLD) still open what they sealed, so keys can be
 * rotated: deploy the new key with the old one listed, then `npm run admin -- rotate-secrets`.
 * Outside production, with no key set, one is generated once into DATA_DIR/secret.key, so development needs no setup;
 * in production nothing is sealed without BAIKAL_SECRET_KEY (credentials named by environment variable still work).
 */
export class CredentialVault {
  /** undefined: not looked up yet (the development key file is read or made on first use only). */
  private current: VaultKey | null | undefined;
  private readonly old: VaultKey[];

  constructor(private readonly options: VaultOptions) {
    const given = options.env.BAIKAL_SECRET_KEY?.trim();
    if (given) this.current = vaultKey(parseSecretKey(given, 'BAIKAL_SECRET_KEY'));
    else if (options.production) this.current = null;
    this.old = (options.env.BAIKAL_SECRET_KEYS_OLD ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry, i) => vaultKey(parseSecretKey(entry, `BAIKAL_SECRET_KEYS_OLD (entry ${i + 1})`)));
  }

  /** Whether a secret can be sealed now (false in production without BAIKAL_SECRET_KEY). */
  get canSeal(): boolean {
    return this.currentKey() !== null;
  }

  seal(secret: string, context: SealContext): string {
    const key = this.currentKey();
    if (!key) {
      throw new VaultError('BAIKAL_SECRET_KEY is not set: in production a secret is stored only encrypted with it (or name an environment variable that holds the secret instead)', 'no_key');
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(context));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [FORMAT, key.id, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  open(sealed: string, context: SealContext): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== FORMAT) throw new VaultError('not a sealed secret of this version', 'malformed');
    const [, keyId, iv, ciphertext, tag] = parts as [string, string, string, string, string];
    const keys = this.keys().filter((key) => key.id === keyId);
    if (!keys.length) throw new VaultError(`sealed with key ${keyId}, which is neither BAIKAL_SECRET_KEY nor listed in BAIKAL_SECRET_KEYS_OLD`, 'unknown_key');
    const ivBytes = Buffer.from(iv, 'base64url');
    const tagBytes = Buffer.from(tag, 'base64url');
    if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new VaultError('not a sealed secret of this version', 'malformed');
    for (const key of keys) {
      try {
        const decipher = createDecipheriv(ALGORITHM, key.key, ivBytes, { authTagLength: TAG_BYTES });
        decipher.setAAD(additionalData(context));
        decipher.setAuthTag(tagBytes);
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        // Two keys may share an 8-digit id; try the next one.
      }
    }
    throw new VaultError('cannot be decrypted: the key does not match, or the value or the row it belongs to was altered', 'rejected');
  }

  /** Whether a sealed value was made with the current key (rotation leaves those alone). */
  isCurrent(sealed: string): boolean {
    const key = this.currentKey();
    return key !== null && sealed.split('.')[1] === key.id;
  }

  private keys(): VaultKey[] {
    const current = this.currentKey();
    return current ? [current, ...this.old] : this.old;
  }

  private currentKey(): VaultKey | null {
    if (this.current === undefined) this.current = vaultKey(this.developmentKey());
    return this.current;
  }

  /** DATA_DIR/secret.key, made (mode 0600) by whichever process needs it first; the others read it. */
  private developmentKey(): Buffer {
    const file = path.join(this.options.dataDir, KEY_FILE);
    try {
      mkdirSync(this.options.dataDir, { recursive: true });
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
      this.options.log.warn({ file }, `BAIKAL_SECRET_KEY is not set: generated a key for stored upstream credentials in ${file} (keep it with the data directory); production needs BAIKAL_SECRET_KEY`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new StartupError(`cannot create ${file} for stored upstream credentials: ${(error as Error).message}`);
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new StartupError(`cannot read ${file}: ${(error as Error).message}`);
    }
    return parseSecretKey(text, file);
  }
}

/**
 * A 256-bit key given as 64 hex digits or as base64 (standard or URL-safe, padded or not). Anything else stops the
 * start with one line naming where it came from, never the value.
 */
export function parseSecretKey(value: string, name: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(value) || /^[A-Za-z0-9_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value, 'base64');
    if (key.length === 32) return key;
  }
  throw new StartupError(`${name} must be 32 bytes written as base64 (44 characters, e.g. \`openssl rand -base64 32\`) or as 64 hex digits`);
}

function vaultKey(key: Buffer): VaultKey {
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 8), key };
}

function additionalData(context: SealContext): Buffer {
  return Buffer.from(`baikal:upstream-credential:${FORMAT}\u0000${context.upstreamId}\u0000${context.credentialId}`, 'utf8');
}

/** What an admin may see of a secret: at most its last four characters, and never more than a quarter of it. */
export function lastCharacters(secret: string): string {
  return secret.slice(secret.length - Math.min(4, Math.floor(secret.length / 4)));
}
