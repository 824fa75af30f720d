import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import type { Mailer } from '../../mail/mailer.js';
import { templates } from '../../mail/templates.js';
import { randomSecret } from '../../shared/ids.js';
import type { Logger } from '../../shared/logging.js';
import { deliver, DEFAULT_DELIVER_LIMITS, type AttemptResult } from './deliver.js';
import type { Resolver } from './url-policy.js';
import type { ClaimedDelivery, WebhooksRepository } from './webhooks.repository.js';
import type { WebhooksSettings } from './webhooks.settings.js';

/**
 * The retry schedule after the first attempt, in units of `retryBaseMs` (5 s in production): Svix's
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, so eight attempts span about 27 hours. Each wait has ±20% jitter.
 */
export const RETRY_STEPS = [1, 60, 360, 1_440, 3_600, 7_200, 7_200];

/** The wait before attempt `attempts + 1`, or null when the schedule is spent. */
export function retryDelayMs(attempts: number, baseMs: number, random = Math.random): number | null {
  const step = RETRY_STEPS[attempts - 1];
  if (step === undefined) return null;
  return Math.round(step * baseMs * (0.8 + 0.4 * random()));
}

/**
 * Signs a body as Standard Webhooks says, with the maintained library: `v1,<base64>`; during a rotation's
 * grace period the old secret's signature follows the new one's, space-separated, so a receiver that still
 * has the old secret verifies too.
 */
export function signatureHeader(delivery: Pick<ClaimedDelivery, 'message_id' | 'secret' | 'previous_secret' | 'previous_secret_until'>, at: Date, body: string): string {
  const secrets = [delivery.secret];
  if (delivery.previous_secret && delivery.previous_secret_until && new Date(delivery.previous_secret_until) > at) secrets.push(delivery.previous_secret);
  return secrets.map((secret) => new Webhook(secret).sign(delivery.message_id, at, body)).join(' ');
}

export interface WebhookWorkerDeps {
  repository: WebhooksRepository;
  mailer?: Mailer;
  log: Logger;
  settings: WebhooksSettings;
  brandName: string;
  /** DNS (the system's unless a test gives its own). */
  resolve?: Resolver;
}

/**
 * The delivery loops of one process (any number of processes share the table): claim a due delivery with a
 * lease, POST it, record the attempt and schedule the next. A process killed mid-delivery leaves its lease,
 * which ends after `leaseMs`; the delivery is then claimed again (at least once, the same webhook-id).
 */
export class WebhookWorker {
  private readonly owner = `${hostname()}:${process.pid}:${randomSecret(4)}`;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private wakeUp: (() => void)[] = [];
  private counts = { delivered: 0, failed: 0 };
  private progress?: NodeJS.Timeout;

  constructor(private readonly deps: WebhookWorkerDeps) {}

  start(): void {
    this.stopping = false;
    for (let i = 0; i < this.deps.settings.workers; i++) this.loops.push(this.loop());
    this.progress = setInterval(() => this.logProgress(), 60_000).unref();
  }

  /** Stops claiming and lets the deliveries in flight finish (each is bounded by the delivery timeout). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.progress);
    this.wake();
    await Promise.all(this.loops);
    this.loops = [];
    await this.deps.repository.release(this.owner).catch(() => undefined);
    this.logProgress();
  }

  /** Ends the idle wait (a delivery was queued by this process). */
  wake(): void {
    const waiting = this.wakeUp;
    this.wakeUp = [];
    for (const resolve of waiting) resolve();
  }

  private logProgress(): void {
    if (this.counts.delivered || this.counts.failed) this.deps.log.info({ ...this.counts }, 'webhook deliveries since the last report');
    this.counts = { delivered: 0, failed: 0 };
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let claimed: ClaimedDelivery | null = null;
      try {
        claimed = await this.deps.repository.claim(this.owner, this.deps.settings.leaseMs);
        if (claimed) await this.attempt(claimed);
      } catch (error) {
        this.deps.log.error({ err: (error as Error).message, deliveryId: claimed?.id }, 'webhook worker step failed');
      }
      if (!claimed && !this.stopping) await this.idle();
    }
  }

  private idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.deps.settings.pollMs);
      this.wakeUp.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const at = new Date();
    const body = JSON.stringify(delivery.payload);
    const headers = {
      'webhook-id': delivery.message_id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatureHeader(delivery, at, body),
    };
    const result: AttemptResult = await deliver(delivery.url, body, headers, { ...DEFAULT_DELIVER_LIMITS, allowInsecure: this.deps.settings.allowInsecureUrls, resolve: this.deps.resolve });
    const retryIn = result.ok ? null : retryDelayMs(delivery.attempts, this.deps.settings.retryBaseMs);
    const { disabled } = await this.deps.repository.record(
      delivery.id,
      this.owner,
      { at: at.toISOString(), statusCode: result.statusCode, error: result.error, durationMs: result.durationMs, responseBody: result.responseBody },
      retryIn,
      this.deps.settings.disableAfterMs,
    );
    if (result.ok) this.counts.delivered++;
    else this.counts.failed++;
    this.deps.log.debug({ deliveryId: delivery.id, messageId: delivery.message_id, attempt: delivery.attempts, ok: result.ok, status: result.statusCode, error: result.error }, 'webhook attempt');
    if (disabled) {
      this.deps.log.warn({ userId: disabled.userId }, 'webhook endpoint disabled after failing deliveries');
      if (disabled.email && this.deps.mailer) {
        const days = this.deps.settings.disableAfterMs / 86_400_000;
        await this.deps.mailer.send({ to: disabled.email, ...templates.webhookDisabled(disabled.language, { brand: this.deps.brandName, url: disabled.url, days }) });
      }
    }
  }
}
