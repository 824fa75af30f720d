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
  /** Joined from the key's account where the inference path needs it. */
  account_concurrency_limit?: number | null;
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

  active(userId: string): Promise<KeyRow[]> {
    return this.em().execute('select * from api_keys where user_id = ? and revoked_at is null order by created_at desc, id desc', [userId]);
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
        `insert into api_keys (id, user_id, label, key_hash, key_hint, provider_family, route_group, pricing_plan, monthly_spend_cap_usd)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`,
        [newId(), userId, key.label, key.keyHash, key.keyHint, key.providerFamily, key.routeGroup, key.pricingPlan, key.monthlySpendCap],
      );
      await within?.(em, inserted!);
      return inserted!;
    });
  }

  /** True when an active key of this account was revoked now; `within` runs in the same transaction then (the webhook event). */
  async revoke(id: string, userId: string, within?: (tx: EntityManager, row: { id: string; revoked_at: Date }) => Promise<void>): Promise<boolean> {
    return this.em().transactional(async (tx) => {
      const [row] = await tx.execute<{ id: string; revoked_at: Date }[]>('update api_keys set revoked_at = now() where id = ? and user_id = ? and revoked_at is null returning id, revoked_at', [id, userId]);
      if (row) await within?.(tx, row);
      return row !== undefined;
    });
  }

  /** An active key by the SHA-256 of its secret, with its account's concurrency limit. */
  async byHash(hash: string): Promise<KeyRow | undefined> {
    const [row] = await this.em().execute<KeyRow[]>(
      'select k.*, u.concurrency_limit as account_concurrency_limit from api_keys k join users u on u.id = k.user_id where k.key_hash = ? and k.revoked_at is null',
      [hash],
    );
    return row;
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
