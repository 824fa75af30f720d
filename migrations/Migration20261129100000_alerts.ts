import { Migration } from '@mikro-orm/migrations';

/**
 * Alerts the customer sets (src/events/alerts): the account's alert language, its rules, and the crossing state
 * that makes a threshold alert fire once per crossing and an event alert once per invoice or video task. A
 * crossing row is written by an `insert ... on conflict ... where` (a compare-and-set), so two gateway processes
 * evaluating the same change never both send.
 */
export class Migration20261129100000_alerts extends Migration {
  override name = 'Migration20261129100000_alerts';

  override up(): void {
    this.addSql(`
      create table alert_settings (
        user_id uuid primary key references users(id) on delete cascade,
        language text not null check (language in ('ru', 'en')),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table alert_rules (
        user_id uuid not null references alert_settings(user_id) on delete cascade,
        kind text not null check (kind in ('balance_below', 'spend_today_above', 'key_cap_share', 'invoice_paid', 'video_finished')),
        key_id uuid null references api_keys(id) on delete cascade,
        threshold numeric(30,10) null,
        channels text[] not null check (cardinality(channels) > 0 and channels <@ array['email', 'messenger']::text[])
      )`);
    // One rule of a kind per account, and per key for key shares (a null key: every key with a cap).
    this.addSql(`create unique index alert_rules_one_idx on alert_rules (user_id, kind, coalesce(key_id, '00000000-0000-0000-0000-000000000000'::uuid))`);
    this.addSql(`
      create table alert_crossings (
        user_id uuid not null references users(id) on delete cascade,
        subject text not null,
        period text not null,
        crossed_at timestamptz not null default now(),
        primary key (user_id, subject)
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists alert_crossings');
    this.addSql('drop table if exists alert_rules');
    this.addSql('drop table if exists alert_settings');
  }
}
