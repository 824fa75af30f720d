import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids.js';

/** The api_keys table (and the account limit the inference path reads with a key). KeysService keeps the rules. */
export interface KeyRow {
  id: string;
  user_id: string;
  label: string | null;
  provider_family: string;
  route_group: string;
  pricing_plan: string;
  monthly_spend_cap_usd: string | null;
  rpm_limit: number | null;
  concurrency_limit: number | null;
  /** The member who made an organization's key (`user_id` is then the organization); null for a personal key. */
  created_by: string | null;
  /** Joined from the key's account where the inference path needs it. */
  account_concurrency_limit?: number | null;
  /** Joined for an organization's key: the member's and the organization's monthly caps. */
  member_cap_usd?: string | null;
  owner_cap_usd?: string | null;
  last_used_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
}

export interface NewKey {
  label: string | null;
  keyHash: string;
  keyHint: string;
  providerFamily: string;
  routeGroup: string;
  pricingPlan: string;
  monthlySpendCap: string | null;
  /** The member who makes an organization's key; null for a personal one. */
  createdBy: string | null;
}

export class KeysRepository {
  constructor(private readonly orm: MikroORM) {}

  private em() {
    return this.orm.em.fork();
  }

  async labels(ids: readonly string[]): Promise<{ id: string; label: string | null }[]> {
    return this.em().execute(`select id, label from api_keys where id in (${ids.map(() => '?').join(', ')})`, [...ids]);
  }

  /** Every key of one account, revoked ones included, newest first. */
  all(userId: string): Promise<KeyRow[]> {
    return this.em().execute('select * from api_keys where user_id = ? order by created_at desc, id', [userId]);
  }

  /** Active keys of a ledger owner; of an organization, only one member's when `createdBy` is given. */
  active(userId: string, createdBy?: string): Promise<KeyRow[]> {
    const byMember = createdBy === undefined ? '' : ' and created_by = ?';
    return this.em().execute(`select * from api_keys where user_id = ?${byMember} and revoked_at is null order by created_at desc, id desc`, createdBy === undefined ? [userId] : [userId, createdBy]);
  }

  /**
   * Inserts a key unless the account already has `maxActive` active ones (then null). Count and insert
   * run under a lock of the account's row: parallel creations are serialised, so the bound holds exactly
   * (a plain count then insert let 150 parallel requests make 103 keys). `within` runs in the same
   * transaction after the insert (the account's webhook event).
   */
  insertWithin(userId: string, key: NewKey, maxActive: number, within?: (tx: EntityManager, row: KeyRow) => Promise<void>): Promise<KeyRow | null> {
    return this.em().transactional(async (em) => {
      await em.execute('select 1 from users where id = ? for update', [userId]);
      const [{ n }] = (await em.execute<{ n: string }[]>('select count(*) as n from api_keys where user_id = ? and revoked_at is null', [userId])) as [{ n: string }];
      if (Number(n) >= maxActive) return null;
      const [inserted] = await em.execute<KeyRow[]>(
        `insert into api_keys (id, user_id, label, key_hash, key_hint, provider_family, route_group, pricing_plan, monthly_spend_cap_usd, created_by)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`,
        [newId(), userId, key.label, key.keyHash, key.keyHint, key.providerFamily, key.routeGroup, key.pricingPlan, key.monthlySpendCap, key.createdBy],
      );
      await within?.(em, inserted!);
      return inserted!;
    });
  }

  /**
   * True when an active key of this owner (and of this member, when `createdBy` is given) was revoked now; `within`
   * runs in the same transaction then (the webhook event).
   */
  async revoke(id: string, userId: string, within?: (tx: EntityManager, row: { id: string; revoked_at: Date }) => Promise<void>, createdBy?: string): Promise<boolean> {
    return this.em().transactional(async (tx) => {
      const byMember = createdBy === undefined ? '' : ' and created_by = ?';
      const [row] = await tx.execute<{ id: string; revoked_at: Date }[]>(
        `update api_keys set revoked_at = now() where id = ? and user_id = ?${byMember} and revoked_at is null returning id, revoked_at`,
        createdBy === undefined ? [id, userId] : [id, userId, createdBy],
      );
      if (row) await within?.(tx, row);
      return row !== undefined;
    });
  }

  /**
   * An active key by the SHA-256 of its secret, with its account's concurrency limit; an organization's key with
   * its member's and the organization's monthly caps, and only while its member still belongs (removal revokes
   * the member's keys too: this is the second lock on that door).
   */
  async byHash(hash: string): Promise<KeyRow | undefined> {
    const [row] = await this.em().execute<KeyRow[]>(
      `select k.*, u.concurrency_limit as account_concurrency_limit, m.monthly_spend_cap_usd as member_cap_usd, o.monthly_spend_cap_usd as owner_cap_usd
         from api_keys k join users u on u.id = k.user_id
         left join organizations o on o.id = k.user_id
         left join organization_members m on m.organization_id = k.user_id and m.user_id = k.created_by
        where k.key_hash = ? and k.revoked_at is null and (k.created_by is null or m.user_id is not null)`,
      [hash],
    );
    return row;
  }

  /** Revokes every active key a member made for an organization, in the caller's transaction (the member's removal). */
  async revokeMemberKeys(tx: EntityManager, organizationId: string, memberId: string): Promise<string[]> {
    const rows = await tx.execute<{ id: string }[]>('update api_keys set revoked_at = now() where user_id = ? and created_by = ? and revoked_at is null returning id', [organizationId, memberId]);
    return rows.map((row) => row.id);
  }

  /** Ids of the active keys of an owner (of one member, when `createdBy` is given): whose cached caps a change drops. */
  async activeIds(userId: string, createdBy?: string): Promise<string[]> {
    return (await this.active(userId, createdBy)).map((row) => row.id);
  }

  /** Moves each key's last use forward (never back) in one statement. */
  async touch(used: [id: string, at: Date][]): Promise<void> {
    const values = used.map(() => '(?::uuid, ?::timestamptz)').join(', ');
    await this.em().execute(
      `update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, v.at), v.at) from (values ${values}) as v(id, at) where k.id = v.id`,
      used.flatMap(([id, at]) => [id, at]),
    );
  }

  /** Sets the given limits (a null restores the baseline); with none given, reads the key. */
  async setLimits(id: string, limits: { rpmLimit?: number | null; concurrencyLimit?: number | null; monthlySpendCap?: string | null }): Promise<KeyRow | undefined> {
    const columns = { rpmLimit: 'rpm_limit', concurrencyLimit: 'concurrency_limit', monthlySpendCap: 'monthly_spend_cap_usd' } as const;
    const changes = (Object.keys(columns) as (keyof typeof columns)[]).filter((name) => limits[name] !== undefined);
    const em = this.em();
    const [row] = changes.length
      ? await em.execute<KeyRow[]>(`update api_keys set ${changes.map((name) => `${columns[name]} = ?`).join(', ')} where id = ? returning *`, [...changes.map((name) => limits[name]), id])
      : await em.execute<KeyRow[]>('select * from api_keys where id = ?', [id]);
    return row;
  }

  /** Sets an account's concurrency limit; returns it with the ids of the account's active keys, or null for no account. */
  async setAccountConcurrency(userId: string, limit: number | null): Promise<{ concurrencyLimit: number | null; keyIds: string[] } | null> {
    const em = this.em();
    const [user] = await em.execute<{ concurrency_limit: number | null }[]>('update users set concurrency_limit = ? where id = ? returning concurrency_limit', [limit, userId]);
    if (!user) return null;
    const keys = await em.execute<{ id: string }[]>('select id from api_keys where user_id = ? and revoked_at is null', [userId]);
    return { concurrencyLimit: user.concurrency_limit, keyIds: keys.map((key) => key.id) };
  }

  /** The distinct (family, group, plan) of a user's active keys. */
  async scopesOf(userId: string): Promise<{ family: string; group: string; plan: string }[]> {
    const rows = await this.em().execute<{ provider_family: string; route_group: string; pricing_plan: string }[]>(
      'select distinct provider_family, route_group, pricing_plan from api_keys where user_id = ? and revoked_at is null',
      [userId],
    );
    return rows.map((r) => ({ family: r.provider_family, group: r.route_group, plan: r.pricing_plan }));
  }
}
