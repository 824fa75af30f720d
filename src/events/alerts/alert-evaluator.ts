import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../shared/logging.js';
import { formatUsd, money } from '../../shared/money.js';
import { alertText, type AlertText } from './alert-texts.js';
import { cross, rearm, snapshot, type AlertSnapshot } from './alerts.repository.js';
import type { AlertChannel, AlertEvent, AlertRule, FiredAlert } from './alerts.schemas.js';

/** How alerts leave: mail to the verified address, a message to the linked messenger chat (null: no bot to send). */
export interface AlertDelivery {
  brandName: string;
  sendMail(to: string, content: AlertText): Promise<boolean>;
  sendMessenger: ((messengerUserId: string, text: string) => Promise<boolean>) | null;
}

/**
 * Called inside the transaction that records a crossing (or an invoice's or task's alert), so what it writes
 * (a webhook in an outbox) commits if and only if the alert fires.
 */
export type OnFired = (tx: EntityManager, userId: string, alert: FiredAlert) => Promise<void>;

/** One thing a rule watches, as this evaluation sees it. */
interface Candidate {
  subject: string;
  /**
   * The crossing counts once per period, which names the threshold too (a changed threshold is a new crossing):
   * the balance's amount, the UTC day and amount for spend, the month, cap and percent for a key.
   */
  period: string;
  over: boolean;
  rule: AlertRule;
  alert: FiredAlert;
}

/** The threshold alerts' candidates of one snapshot. */
export function candidatesOf(s: AlertSnapshot): Candidate[] {
  const out: Candidate[] = [];
  const balance = money(s.balanceUsd);
  for (const rule of s.rules) {
    const threshold = rule.threshold ?? '0';
    if (rule.kind === 'balance_below') {
      out.push({ subject: 'balance_below', period: money(threshold).toFixed(), over: balance.lessThan(threshold), rule, alert: { kind: 'balance_below', thresholdUsd: formatUsd(threshold), balanceUsd: formatUsd(s.balanceUsd) } });
    } else if (rule.kind === 'spend_today_above' && s.spentTodayUsd !== null) {
      const spent = s.spentTodayUsd;
      out.push({ subject: 'spend_today_above', period: `${s.day}:${money(threshold).toFixed()}`, over: money(spent).greaterThan(threshold), rule, alert: { kind: 'spend_today_above', thresholdUsd: formatUsd(threshold), spentUsd: formatUsd(spent), day: s.day } });
    }
  }
  const shareRules = s.rules.filter((rule) => rule.kind === 'key_cap_share');
  for (const key of s.cappedKeys) {
    // A key's own rule wins over the rule for every capped key.
    const rule = shareRules.find((r) => r.keyId === key.id) ?? shareRules.find((r) => r.keyId === null);
    if (!rule || !money(key.capUsd).greaterThan(0)) continue;
    const percent = Number(rule.threshold);
    const over = money(key.spentUsd).greaterThanOrEqualTo(money(key.capUsd).times(percent).dividedBy(100));
    out.push({
      subject: `key_cap_share:${key.id}`,
      // A new month, or a changed cap, starts over.
      period: `${s.month}:${money(key.capUsd).toFixed()}:${percent}`,
      over,
      rule,
      alert: { kind: 'key_cap_share', keyId: key.id, keyLabel: key.label, percent, spentUsd: formatUsd(key.spentUsd), capUsd: formatUsd(key.capUsd) },
    });
  }
  return out;
}

const eventSubject = (event: AlertEvent) => (event.kind === 'invoice_paid' ? `invoice:${event.invoiceId}` : `video:${event.taskId}`);

/**
 * Evaluates an account's alert rules after its committed changes: coalesced per account (one evaluation at most
 * every `coalesceMs`, which reads the snapshot once), never on the /v1 path (it runs from timers). Each crossing
 * is a compare-and-set in PostgreSQL, so another process evaluating the same account at the same moment sends
 * nothing twice; messages go out after that commit (at most once: a crash between the two loses the alert).
 */
export class AlertEvaluator {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly pending = new Map<string, AlertEvent[]>();
  private readonly runs = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      log: Logger;
      coalesceMs: number;
      delivery: AlertDelivery;
      onFired?: OnFired;
    },
  ) {}

  /** Something committed changed the account: evaluate within `coalesceMs`. */
  changed(userId: string): void {
    if (this.stopped || this.timers.has(userId)) return;
    const timer = setTimeout(() => {
      this.timers.delete(userId);
      void this.run(userId);
    }, this.deps.coalesceMs);
    timer.unref();
    this.timers.set(userId, timer);
  }

  /** An invoice was paid or a video task finished: alerted once per id, with the next evaluation. */
  event(userId: string, event: AlertEvent): void {
    const own = this.pending.get(userId);
    if (own) own.push(event);
    else this.pending.set(userId, [event]);
    this.changed(userId);
  }

  /** Evaluates now (after any evaluation of the account under way); answers the alerts this call fired. */
  async evaluate(userId: string): Promise<FiredAlert[]> {
    const previous = this.runs.get(userId) ?? Promise.resolve();
    let fired: FiredAlert[] = [];
    const run = previous.then(async () => {
      fired = await this.evaluateOnce(userId);
    });
    const tracked = run.catch(() => {}).finally(() => {
      if (this.runs.get(userId) === tracked) this.runs.delete(userId);
    });
    this.runs.set(userId, tracked);
    await run;
    return fired;
  }

  /** Resolves when no evaluation is scheduled or running (tests, graceful stop). */
  async idle(): Promise<void> {
    while (this.timers.size || this.runs.size) {
      if (this.runs.size) await Promise.all(this.runs.values());
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Runs what is scheduled now, then takes nothing more. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const [userId, timer] of this.timers) {
      clearTimeout(timer);
      this.timers.delete(userId);
      void this.run(userId);
    }
    await this.idle();
  }

  private async run(userId: string): Promise<void> {
    await this.evaluate(userId).catch((error: unknown) => this.deps.log.error({ err: error, userId }, 'alert evaluation failed'));
  }

  private async evaluateOnce(userId: string): Promise<FiredAlert[]> {
    const events = this.pending.get(userId) ?? [];
    this.pending.delete(userId);
    const s = await snapshot(this.deps.orm.em.fork(), userId);
    if (!s) return [];
    const fired: { alert: FiredAlert; rule: AlertRule }[] = [];
    for (const c of candidatesOf(s)) {
      const last = s.crossed.get(c.subject);
      if (c.over && last !== c.period) {
        if (await this.fire(userId, c.subject, c.period, c.alert)) fired.push(c);
      } else if (!c.over && last !== undefined) {
        await rearm(this.deps.orm.em.fork(), userId, c.subject, last);
      }
    }
    for (const event of events) {
      const rule = s.rules.find((r) => r.kind === event.kind);
      if (rule && (await this.fire(userId, eventSubject(event), 'once', event))) fired.push({ alert: event, rule });
    }
    await Promise.all(fired.map(({ alert, rule }) => this.deliver(userId, s, rule.channels, alert)));
    return fired.map((f) => f.alert);
  }

  /** The compare-and-set, with the hook in its transaction: true when this call is the one that fires. */
  private fire(userId: string, subject: string, period: string, alert: FiredAlert): Promise<boolean> {
    return this.deps.orm.em.fork().transactional(async (tx) => {
      if (!(await cross(tx, userId, subject, period))) return false;
      await this.deps.onFired?.(tx, userId, alert);
      return true;
    });
  }

  private async deliver(userId: string, s: AlertSnapshot, channels: AlertChannel[], alert: FiredAlert): Promise<void> {
    const { delivery, log } = this.deps;
    const content = alertText(alert, s.language, delivery.brandName);
    const sends: Promise<boolean>[] = [];
    if (channels.includes('email') && s.email && s.emailVerified) sends.push(delivery.sendMail(s.email, content));
    if (channels.includes('messenger') && s.messengerUserId && delivery.sendMessenger) sends.push(delivery.sendMessenger(s.messengerUserId, `${content.subject}\n\n${content.text}`));
    const sent = await Promise.all(sends);
    log.info({ userId, alert: alert.kind, channels: sends.length, delivered: sent.filter(Boolean).length }, 'alert fired');
  }
}
