import type { EntityManager } from '@mikro-orm/postgresql';
import { USAGE_KINDS } from '../../ledger/kinds.js';
import type { AlertChannel, AlertKind, AlertLanguage, AlertRule } from './alerts.schemas.js';

/**
 * The alert tables (alert_settings, alert_rules, alert_crossings) and the one read an evaluation makes. It also
 * reads, never writes, what an alert is about: the account's balances and contacts (users), today's spend from the
 * usage rollups (usage_hourly: at most a row per hour and model, however busy the account), and its capped keys'
 * month spend from the ledger's usage rows, as admission counts it (transactions_key_month_idx; a range that grows
 * with the key's batches this month, read only for accounts with a key-share rule).
 */

const USAGE_KIND_LIST = USAGE_KINDS.map((k) => `'${k}'`).join(',');
/** The start of the current UTC day / month as a timestamptz. */
const DAY_START = `date_trunc('day', now() at time zone 'utc') at time zone 'utc'`;
const MONTH_START = `date_trunc('month', now() at time zone 'utc') at time zone 'utc'`;

interface RuleRow {
  kind: AlertKind;
  key_id: string | null;
  threshold: string | null;
  channels: AlertChannel[];
}

const toRule = (row: RuleRow): AlertRule => ({ kind: row.kind, keyId: row.key_id, threshold: row.threshold, channels: row.channels });

/** Who an alert reaches. */
export interface AlertContacts {
  email: string | null;
  emailVerified: boolean;
  messengerUserId: string | null;
}

/** Everything one evaluation needs, read in one statement. */
export interface AlertSnapshot extends AlertContacts {
  language: AlertLanguage;
  rules: AlertRule[];
  balanceUsd: string;
  /** Usage spent today (UTC); null when no rule needs it. */
  spentTodayUsd: string | null;
  /** The account's live keys with a monthly cap and their spend this UTC month; empty when no rule needs them. */
  cappedKeys: { id: string; label: string | null; capUsd: string; spentUsd: string }[];
  /** Crossing state of the threshold alerts: subject -> the period it last fired in. */
  crossed: Map<string, string>;
  /** The database's UTC day (YYYY-MM-DD) and month (YYYY-MM), the periods spend and key shares restart in. */
  day: string;
  month: string;
}

export async function accountsWithRules(em: EntityManager): Promise<string[]> {
  const rows = await em.execute<{ user_id: string }[]>('select distinct user_id from alert_rules');
  return rows.map((row) => row.user_id);
}

export async function hasRules(em: EntityManager, userId: string): Promise<boolean> {
  const rows = await em.execute('select 1 from alert_rules where user_id = ? limit 1', [userId]);
  return rows.length > 0;
}

export async function contactsOf(em: EntityManager, userId: string): Promise<AlertContacts | null> {
  const [row] = await em.execute<{ email: string | null; email_verified: boolean; messenger_user_id: string | null }[]>(
    'select email, email_verified, messenger_user_id from users where id = ?',
    [userId],
  );
  return row ? { email: row.email, emailVerified: row.email_verified, messengerUserId: row.messenger_user_id } : null;
}

export async function settingsOf(em: EntityManager, userId: string): Promise<{ language: AlertLanguage; rules: AlertRule[] } | null> {
  const [settings] = await em.execute<{ language: AlertLanguage }[]>('select language from alert_settings where user_id = ?', [userId]);
  if (!settings) return null;
  const rules = await em.execute<RuleRow[]>('select kind, key_id, threshold::text as threshold, channels from alert_rules where user_id = ? order by kind, key_id nulls first', [userId]);
  return { language: settings.language, rules: rules.map(toRule) };
}

/** Of `keyIds`, those that are the account's own keys and not revoked. */
export async function liveKeyIds(em: EntityManager, userId: string, keyIds: string[]): Promise<Set<string>> {
  if (!keyIds.length) return new Set();
  const rows = await em.execute<{ id: string }[]>('select id from api_keys where user_id = ? and revoked_at is null and id in (select jsonb_array_elements_text(?::jsonb)::uuid)', [userId, JSON.stringify(keyIds)]);
  return new Set(rows.map((row) => row.id));
}

/** Replaces the account's rules (in the caller's transaction). */
export async function replaceRules(tx: EntityManager, userId: string, language: AlertLanguage, rules: AlertRule[]): Promise<void> {
  await tx.execute(
    `insert into alert_settings (user_id, language) values (?, ?)
       on conflict (user_id) do update set language = excluded.language, updated_at = now()`,
    [userId, language],
  );
  await tx.execute('delete from alert_rules where user_id = ?', [userId]);
  // A threshold rule turned off forgets its crossings: turned on again, it alerts on the value as it is then.
  await tx.execute(
    `delete from alert_crossings where user_id = ? and period <> 'once' and split_part(subject, ':', 1) <> all(array(select jsonb_array_elements_text(?::jsonb)))`,
    [userId, JSON.stringify(rules.map((rule) => rule.kind))],
  );
  for (const rule of rules) {
    await tx.execute('insert into alert_rules (user_id, kind, key_id, threshold, channels) values (?, ?, ?, ?, array(select jsonb_array_elements_text(?::jsonb)))', [
      userId,
      rule.kind,
      rule.keyId,
      rule.threshold,
      // Arrays given as JSON: the driver would spread a JavaScript array into a list of placeholders.
      JSON.stringify(rule.channels),
    ]);
  }
}

interface SnapshotRow {
  language: AlertLanguage;
  email: string | null;
  email_verified: boolean;
  messenger_user_id: string | null;
  balance: string;
  day: string;
  month: string;
  spent_today: string | null;
  rules: { kind: AlertKind; keyId: string | null; threshold: string | null; channels: AlertChannel[] }[];
  crossings: { subject: string; period: string }[];
  keys: { id: string; label: string | null; cap: string; spent: string }[] | null;
}

/** The one read of an evaluation; null when the account has no alert settings (or no longer exists). */
export async function snapshot(em: EntityManager, userId: string): Promise<AlertSnapshot | null> {
  const [row] = await em.execute<SnapshotRow[]>(
    `select s.language, u.email, u.email_verified, u.messenger_user_id,
            (u.balance_paid_usd + u.balance_bonus_usd)::text as balance,
            to_char(now() at time zone 'utc', 'YYYY-MM-DD') as day,
            to_char(now() at time zone 'utc', 'YYYY-MM') as month,
            case when exists (select 1 from alert_rules r where r.user_id = u.id and r.kind = 'spend_today_above') then
              (select coalesce(sum(h.spend_usd), 0) from usage_hourly h where h.user_id = u.id and h.hour >= ${DAY_START})::text end as spent_today,
            (select coalesce(json_agg(json_build_object('kind', r.kind, 'keyId', r.key_id, 'threshold', r.threshold::text, 'channels', r.channels)), '[]')
               from alert_rules r where r.user_id = u.id) as rules,
            (select coalesce(json_agg(json_build_object('subject', c.subject, 'period', c.period)), '[]')
               from alert_crossings c where c.user_id = u.id and c.period <> 'once') as crossings,
            case when exists (select 1 from alert_rules r where r.user_id = u.id and r.kind = 'key_cap_share') then
              (select coalesce(json_agg(json_build_object('id', k.id, 'label', k.label, 'cap', k.monthly_spend_cap_usd::text,
                        'spent', (select coalesce(-sum(t.amount_usd), 0) from transactions t
                                   where t.api_key_id = k.id and t.kind in (${USAGE_KIND_LIST}) and t.created_at >= ${MONTH_START})::text)), '[]')
                 from api_keys k where k.user_id = u.id and k.revoked_at is null and k.monthly_spend_cap_usd is not null) end as keys
       from users u join alert_settings s on s.user_id = u.id
      where u.id = ?`,
    [userId],
  );
  if (!row) return null;
  return {
    language: row.language,
    email: row.email,
    emailVerified: row.email_verified,
    messengerUserId: row.messenger_user_id,
    rules: row.rules,
    balanceUsd: row.balance,
    spentTodayUsd: row.spent_today,
    cappedKeys: (row.keys ?? []).map((k) => ({ id: k.id, label: k.label, capUsd: k.cap, spentUsd: k.spent })),
    crossed: new Map(row.crossings.map((c) => [c.subject, c.period])),
    day: row.day,
    month: row.month,
  };
}

/**
 * The compare-and-set of a crossing: records that `subject` fired in `period` unless it already had. True for
 * exactly one caller however many processes try at once (the row's lock decides; the loser's `where` is false).
 */
export async function cross(tx: EntityManager, userId: string, subject: string, period: string): Promise<boolean> {
  const rows = await tx.execute(
    `insert into alert_crossings (user_id, subject, period) values (?, ?, ?)
       on conflict (user_id, subject) do update set period = excluded.period, crossed_at = now()
       where alert_crossings.period <> excluded.period
     returning 1`,
    [userId, subject, period],
  );
  return rows.length > 0;
}

/** The value went back past its threshold: the next crossing fires again. */
export async function rearm(em: EntityManager, userId: string, subject: string, period: string): Promise<void> {
  await em.execute('delete from alert_crossings where user_id = ? and subject = ? and period = ?', [userId, subject, period]);
}
