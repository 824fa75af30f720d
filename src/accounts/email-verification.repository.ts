import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * The email_codes table, and the account's e-mail columns a code proves. Counters and compare-and-set
 * updates: SQL on the ORM's connection, one statement each, so parallel requests cannot slip past a limit.
 */

export type CodePurpose = 'verify' | 'link';

/** A new code as stored: hashed with its row id as salt. */
export interface NewCode {
  id: string;
  userId: string;
  purpose: CodePurpose;
  email: string;
  codeHash: string;
  expiresAt: Date;
}

/** The live code a try was counted against. */
export interface CountedTry {
  id: string;
  email: string;
  attempts: number;
  codeHash: string;
}

export class EmailVerificationRepository {
  constructor(private readonly orm: MikroORM) {}

  private em() {
    return this.orm.em.fork();
  }

  /** Voids the account's unconsumed codes of the purpose. */
  async voidCodes(userId: string, purpose: CodePurpose, at: Date): Promise<void> {
    await this.em().execute('update email_codes set consumed_at = ? where user_id = ? and purpose = ? and consumed_at is null', [at, userId, purpose]);
  }

  /** Voids earlier codes of the purpose, then stores the new one. */
  async replaceCode(code: NewCode, at: Date): Promise<void> {
    await this.voidCodes(code.userId, code.purpose, at);
    await this.em().execute('insert into email_codes (id, user_id, purpose, email, code_hash, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?)', [
      code.id,
      code.userId,
      code.purpose,
      code.email,
      code.codeHash,
      code.expiresAt,
      at,
    ]);
  }

  /**
   * Counts a try against the account's newest live code of the purpose, in one statement (parallel guesses
   * cannot exceed `maxTries`); null when there is no such code, or it expired or ran out of tries.
   */
  async countTry(userId: string, purpose: CodePurpose, maxTries: number, at: Date): Promise<CountedTry | null> {
    const [row] = await this.em().execute<{ id: string; email: string; attempts: number; code_hash: string }[]>(
      `update email_codes set attempts = attempts + 1
        where id = (select id from email_codes where user_id = ? and purpose = ? and consumed_at is null order by created_at desc limit 1)
          and consumed_at is null and attempts < ? and expires_at > ?
        returning id, email, attempts, code_hash`,
      [userId, purpose, maxTries, at],
    );
    return row ? { id: row.id, email: row.email, attempts: row.attempts, codeHash: row.code_hash } : null;
  }

  /** Consumes the code; false when it was consumed already. */
  async consume(id: string, at: Date): Promise<boolean> {
    const rows = await this.em().execute<{ id: string }[]>('update email_codes set consumed_at = ? where id = ? and consumed_at is null returning id', [at, id]);
    return rows.length > 0;
  }

  /** Marks the account's e-mail verified, if it is still `email` (case-insensitively). */
  async markVerified(userId: string, email: string): Promise<void> {
    await this.em().execute('update users set email_verified = true, updated_at = now() where id = ? and lower(email) = lower(?)', [userId, email]);
  }

  async isVerified(userId: string): Promise<boolean> {
    const [row] = await this.em().execute<{ email_verified: boolean }[]>('select email_verified from users where id = ?', [userId]);
    return row?.email_verified === true;
  }

  /** Whether any account has this e-mail (case-insensitively). */
  async emailTaken(email: string): Promise<boolean> {
    const [taken] = await this.em().execute<{ id: string }[]>('select id from users where lower(email) = lower(?)', [email]);
    return taken !== undefined;
  }

  /**
   * Sets a verified e-mail and the password hash on an account that has no e-mail, unless another account
   * has the address; false when not set. A unique-index race throws.
   */
  async linkEmail(userId: string, email: string, passwordHash: string): Promise<boolean> {
    const rows = await this.em().execute<{ id: string }[]>(
      `update users set email = ?, email_verified = true, password_hash = ?, updated_at = now()
        where id = ? and email is null and not exists (select 1 from users o where lower(o.email) = lower(?))
        returning id`,
      [email, passwordHash, userId, email],
    );
    return rows.length > 0;
  }
}
