import { Algorithm, hash, verify } from '@node-rs/argon2';

/** argon2id with OWASP's minimum: 19 MiB of memory, 2 iterations, 1 lane. */
const ARGON2_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let decoyHash: Promise<string> | undefined;

/**
 * Spends the same time as a real verification, for logins of unknown accounts, so response time
 * does not reveal whether an account exists.
 */
export async function verifyDecoy(password: string): Promise<false> {
  decoyHash ??= hashPassword('decoy-password-that-never-matches');
  await verifyPassword(await decoyHash, password);
  return false;
}
