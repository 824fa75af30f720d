import type { MikroORM } from '@mikro-orm/postgresql';
import type { Actor } from '../../shared/actor.js';
import { DomainError, type ValidationIssue } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import { formatUsd } from '../../shared/money.js';
import type { SharedState } from '../../shared/redis.js';
import { parseInput } from '../../shared/validation.js';
import { AlertEvaluator, type AlertDelivery, type OnFired } from './alert-evaluator.js';
import * as repo from './alerts.repository.js';
import { alertSettingsInput, type AlertChannel, type AlertEvent, type AlertLanguage, type AlertRule, type AlertSettingsData, type AlertSettingsInput, type AlertSettingsView } from './alerts.schemas.js';

/** ALERTS_*: how alerts are evaluated and sent. */
export interface AlertsSettings {
  /** An account is evaluated at most once per this many milliseconds (its changes in between are folded). */
  coalesceMs: number;
  /** The language of an account that never saved its alert settings. */
  defaultLanguage: AlertLanguage;
}

export interface AlertsDeps {
  orm: MikroORM;
  log: Logger;
  settings: AlertsSettings;
  delivery: AlertDelivery;
  /** Set with REDIS_URL: every process learns which accounts have rules. */
  shared?: SharedState;
  onFired?: OnFired;
}

/**
 * The alerts a customer sets (balance below, spend today above, a key at a share of its cap, an invoice paid, a
 * video finished), their settings and their evaluation. Which accounts have rules is kept in memory (loaded at
 * start, changed by this process's saves and, through the bus, other processes'), so a committed change of an
 * account without rules costs one Set lookup and no SQL: a cache of the rules themselves would still cost a
 * read per account per expiry, and the set is one id per account that set an alert.
 */
export class AlertsService {
  readonly evaluator: AlertEvaluator;
  private readonly active = new Set<string>();

  constructor(private readonly deps: AlertsDeps) {
    this.evaluator = new AlertEvaluator({ orm: deps.orm, log: deps.log, coalesceMs: deps.settings.coalesceMs, delivery: deps.delivery, onFired: deps.onFired });
  }

  /** Loads the accounts with rules (after the migrations). */
  async start(): Promise<void> {
    for (const userId of await repo.accountsWithRules(this.deps.orm.em.fork())) this.active.add(userId);
  }

  stop(): Promise<void> {
    return this.evaluator.stop();
  }

  /** Whether the account has alert rules (the hub computes nothing for an account no one hears). */
  watches(userId: string): boolean {
    return this.active.has(userId);
  }

  /** A change committed by this process (the account event hub's `onPublished`). */
  changed(userId: string): void {
    if (this.active.has(userId)) this.evaluator.changed(userId);
  }

  /** An invoice paid or a video task finished in this process. */
  event(userId: string, event: AlertEvent): void {
    if (this.active.has(userId)) this.evaluator.event(userId, event);
  }

  /** Another process saved an account's alert settings. */
  adopt(userId: string, active: boolean): void {
    if (active) this.active.add(userId);
    else this.active.delete(userId);
  }

  async settingsOf(actor: Actor): Promise<AlertSettingsView> {
    const em = this.deps.orm.em.fork();
    const contacts = await repo.contactsOf(em, actor.userId);
    if (!contacts) throw new DomainError('unauthenticated', 'Not signed in');
    const stored = await repo.settingsOf(em, actor.userId);
    return this.view(contacts, stored?.language ?? this.deps.settings.defaultLanguage, stored?.rules ?? []);
  }

  /** Replaces the account's alert settings; refuses unknown keys and rules none of whose channels can reach the account. */
  async update(actor: Actor, raw: AlertSettingsInput): Promise<AlertSettingsView> {
    const input = parseInput(alertSettingsInput, raw ?? {});
    const em = this.deps.orm.em.fork();
    const contacts = await repo.contactsOf(em, actor.userId);
    if (!contacts) throw new DomainError('unauthenticated', 'Not signed in');
    const stored = await repo.settingsOf(em, actor.userId);
    const language = input.language ?? stored?.language ?? this.deps.settings.defaultLanguage;
    const rules = rulesOf(input);
    const issues = [...this.channelIssues(input, contacts), ...(await this.keyIssues(actor.userId, input))];
    if (issues.length) throw new DomainError('validation_failed', 'Request validation failed', { issues });
    await em.transactional((tx) => repo.replaceRules(tx, actor.userId, language, rules));
    this.adopt(actor.userId, rules.length > 0);
    void this.deps.shared?.publish({ type: 'alerts-changed', userId: actor.userId, active: rules.length > 0 });
    // The new rules are checked against the account as it is now.
    if (rules.length) this.evaluator.changed(actor.userId);
    return this.view(contacts, language, rules);
  }

  private channelIssues(input: AlertSettingsData, contacts: repo.AlertContacts): ValidationIssue[] {
    const reachable = (channel: AlertChannel) =>
      channel === 'email' ? contacts.email !== null && contacts.emailVerified : contacts.messengerUserId !== null && this.deps.delivery.sendMessenger !== null;
    const issues: ValidationIssue[] = [];
    const check = (loc: (string | number)[], channels: AlertChannel[]) => {
      if (!channels.some(reachable)) {
        issues.push({ loc: [...loc, 'channels'], msg: 'No channel can reach this account: verify the e-mail or link the messenger', type: 'channel_unavailable' });
      }
    };
    for (const field of ['balanceBelow', 'spendTodayAbove', 'invoicePaid', 'videoFinished'] as const) {
      const rule = input[field];
      if (rule) check([field], rule.channels);
    }
    input.keyCapShares.forEach((rule, i) => check(['keyCapShares', i], rule.channels));
    return issues;
  }

  private async keyIssues(userId: string, input: AlertSettingsData): Promise<ValidationIssue[]> {
    const ids = input.keyCapShares.flatMap((rule) => (rule.keyId ? [rule.keyId] : []));
    const live = await repo.liveKeyIds(this.deps.orm.em.fork(), userId, ids);
    const seen = new Set<string>();
    const issues: ValidationIssue[] = [];
    input.keyCapShares.forEach((rule, i) => {
      const id = rule.keyId ?? '';
      if (rule.keyId && !live.has(rule.keyId)) issues.push({ loc: ['keyCapShares', i, 'keyId'], msg: 'No such key', type: 'unknown_key' });
      else if (seen.has(id)) issues.push({ loc: ['keyCapShares', i, 'keyId'], msg: 'Only one rule per key (and one for every key)', type: 'duplicate_rule' });
      seen.add(id);
    });
    return issues;
  }

  private view(contacts: repo.AlertContacts, language: AlertLanguage, rules: AlertRule[]): AlertSettingsView {
    const one = (kind: AlertRule['kind']) => rules.find((rule) => rule.kind === kind);
    const amount = (rule: AlertRule | undefined) => (rule ? { amountUsd: formatUsd(rule.threshold ?? '0'), channels: rule.channels } : null);
    const channels = (rule: AlertRule | undefined) => (rule ? { channels: rule.channels } : null);
    return {
      language,
      email: contacts.email,
      emailVerified: contacts.emailVerified,
      messengerLinked: contacts.messengerUserId !== null,
      messengerAvailable: this.deps.delivery.sendMessenger !== null,
      balanceBelow: amount(one('balance_below')),
      spendTodayAbove: amount(one('spend_today_above')),
      keyCapShares: rules.filter((rule) => rule.kind === 'key_cap_share').map((rule) => ({ keyId: rule.keyId, percent: Number(rule.threshold), channels: rule.channels })),
      invoicePaid: channels(one('invoice_paid')),
      videoFinished: channels(one('video_finished')),
    };
  }
}

function rulesOf(input: AlertSettingsData): AlertRule[] {
  const rules: AlertRule[] = [];
  if (input.balanceBelow) rules.push({ kind: 'balance_below', keyId: null, threshold: input.balanceBelow.amountUsd, channels: input.balanceBelow.channels });
  if (input.spendTodayAbove) rules.push({ kind: 'spend_today_above', keyId: null, threshold: input.spendTodayAbove.amountUsd, channels: input.spendTodayAbove.channels });
  for (const rule of input.keyCapShares) rules.push({ kind: 'key_cap_share', keyId: rule.keyId ?? null, threshold: String(rule.percent), channels: rule.channels });
  if (input.invoicePaid) rules.push({ kind: 'invoice_paid', keyId: null, threshold: null, channels: input.invoicePaid.channels });
  if (input.videoFinished) rules.push({ kind: 'video_finished', keyId: null, threshold: null, channels: input.videoFinished.channels });
  return rules;
}
