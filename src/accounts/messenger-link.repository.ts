import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids.js';

/**
 * The messenger_links table, and the account's messenger columns a link sets. Every status change is a
 * compare-and-set on the link's status (SQL on the ORM's connection), so a token is used at most once
 * however many requests race for it.
 */

export type LinkInitiator = 'cabinet' | 'bot' | 'login';

/** A link (or sign-in) token's row, by the SHA-256 of the token. */
export interface MessengerLink {
  id: string;
  initiatedBy: LinkInitiator;
  userId: string | null;
  messengerUserId: string | null;
  messengerName: string | null;
  status: string;
  errorCode: string | null;
  expiresAt: Date;
}

export interface NewLink {
  tokenHash: string;
  initiatedBy: LinkInitiator;
  /** Set when the cabinet starts the link. */
  userId?: string;
  /** Set when the bot starts it. */
  messengerUserId?: string;
  messengerName?: string | null;
  expiresAt: Date;
}

interface LinkRow {
  id: string;
  initiated_by: LinkInitiator;
  user_id: string | null;
  messenger_user_id: string | null;
  messenger_name: string | null;
  status: string;
  error_code: string | null;
  expires_at: Date;
}

/** The accounts a claimed sign-in may reach, inside the transaction that claimed it. */
export class MessengerAccounts {
  constructor(private readonly tx: EntityManager) {}

  /** The account linked to this messenger identity. */
  async ownerOf(messengerUserId: string): Promise<string | undefined> {
    const [row] = await this.tx.execute<{ id: string }[]>('select id from users where messenger_user_id = ?', [messengerUserId]);
    return row?.id;
  }

  /** Creates the account unless its username or messenger identity is taken (then false, not an error). */
  async insert(id: string, username: string, messengerUserId: string, name: string | null): Promise<boolean> {
    const inserted = await this.tx.execute<{ id: string }[]>('insert into users (id, username, messenger_user_id, messenger_name) values (?, ?, ?, ?) on conflict do nothing returning id', [
      id,
      username,
      messengerUserId,
      name,
    ]);
    return inserted.length > 0;
  }
}

export class MessengerLinksRepository {
  constructor(private readonly orm: MikroORM) {}

  private em() {
    return this.orm.em.fork();
  }

  async insert(link: NewLink): Promise<void> {
    await this.em().execute('insert into messenger_links (id, token_hash, initiated_by, user_id, messenger_user_id, messenger_name, expires_at) values (?, ?, ?, ?, ?, ?, ?)', [
      newId(),
      link.tokenHash,
      link.initiatedBy,
      link.userId ?? null,
      link.messengerUserId ?? null,
      link.messengerName ?? null,
      link.expiresAt,
    ]);
  }

  /** The link of this token hash; a pending one past its expiry is marked expired first (nothing else expires them). */
  async byTokenHash(tokenHash: string, now: Date): Promise<MessengerLink | null> {
    const em = this.em();
    const [row] = await em.execute<LinkRow[]>('select * from messenger_links where token_hash = ?', [tokenHash]);
    if (!row) return null;
    if (row.status === 'pending' && new Date(row.expires_at).getTime() <= now.getTime()) {
      await em.execute("update messenger_links set status = 'expired' where id = ? and status = 'pending'", [row.id]);
      row.status = 'expired';
    }
    return {
      id: row.id,
      initiatedBy: row.initiated_by,
      userId: row.user_id,
      messengerUserId: row.messenger_user_id,
      messengerName: row.messenger_name,
      status: row.status,
      errorCode: row.error_code,
      expiresAt: new Date(row.expires_at),
    };
  }

  /** Fails a pending link with the reason. */
  async fail(id: string, errorCode: string): Promise<void> {
    await this.em().execute("update messenger_links set status = 'failed', error_code = ? where id = ? and status = 'pending'", [errorCode, id]);
  }

  /** The account linked to this messenger identity. */
  ownerOf(messengerUserId: string): Promise<string | undefined> {
    return new MessengerAccounts(this.em()).ownerOf(messengerUserId);
  }

  /** The messenger identity linked to the account (null: none; undefined: no such account). */
  async linkedTo(userId: string): Promise<string | null | undefined> {
    const [row] = await this.em().execute<{ messenger_user_id: string | null }[]>('select messenger_user_id from users where id = ?', [userId]);
    return row?.messenger_user_id;
  }

  /**
   * Confirms a pending, unexpired link for the account and links the identity to the account, in one
   * transaction; `link_used` (nothing changed) when the link was no longer pending. A unique-index
   * refusal (the identity linked to another account meanwhile) throws.
   */
  async confirm(linkId: string, userId: string, messengerUserId: string, name: string | null, now: Date): Promise<'confirmed' | 'link_used'> {
    return this.em().transactional(async (tx) => {
      const claimed = await tx.execute<{ id: string }[]>(
        "update messenger_links set status = 'confirmed', confirmed_at = ?, user_id = ?, messenger_user_id = ?, messenger_name = ? where id = ? and status = 'pending' and expires_at > ? returning id",
        [now, userId, messengerUserId, name, linkId, now],
      );
      if (!claimed.length) return 'link_used';
      await tx.execute('update users set messenger_user_id = ?, messenger_name = ?, updated_at = now() where id = ?', [messengerUserId, name, userId]);
      return 'confirmed';
    });
  }

  async unlink(userId: string): Promise<void> {
    await this.em().execute('update users set messenger_user_id = null, messenger_name = null, updated_at = now() where id = ?', [userId]);
  }

  /** The messenger identity confirms a pending, unexpired sign-in token; false when there was none to confirm. */
  async confirmLogin(tokenHash: string, messengerUserId: string, name: string | null, now: Date): Promise<boolean> {
    const confirmed = await this.em().execute<{ id: string }[]>(
      `update messenger_links set status = 'confirmed', confirmed_at = ?, messenger_user_id = ?, messenger_name = ?
        where token_hash = ? and initiated_by = 'login' and status = 'pending' and expires_at > ? returning id`,
      [now, messengerUserId, name, tokenHash, now],
    );
    return confirmed.length > 0;
  }

  /**
   * Uses a confirmed, unexpired sign-in token (single use) and, in the same transaction, runs `signIn` with
   * its messenger identity (which finds or creates the account); null when there was no such token.
   */
  async claimLogin<T>(tokenHash: string, now: Date, signIn: (accounts: MessengerAccounts, messengerUserId: string, name: string | null) => Promise<T>): Promise<T | null> {
    return this.em().transactional(async (tx) => {
      const [claimed] = await tx.execute<{ messenger_user_id: string; messenger_name: string | null }[]>(
        `update messenger_links set status = 'used'
          where token_hash = ? and initiated_by = 'login' and status = 'confirmed' and expires_at > ?
          returning messenger_user_id, messenger_name`,
        [tokenHash, now],
      );
      return claimed ? signIn(new MessengerAccounts(tx), claimed.messenger_user_id, claimed.messenger_name) : null;
    });
  }

  /** Deletes links that expired before `before`; answers how many. */
  async purgeExpired(before: Date): Promise<number> {
    const rows = await this.em().execute<{ id: string }[]>('delete from messenger_links where expires_at < ? returning id', [before]);
    return rows.length;
  }
}
