import type { MikroORM } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { Mailer, type MailSettings } from '../../mail/mailer.js';
import type { Actor } from '../../shared/actor.js';
import { DomainError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import { parseInput } from '../../shared/validation.js';
import { WEBHOOK_EVENT_TYPES, webhookEventTypes, type WebhookEventType } from '../webhook-types.js';
import { checkUrlForm, resolveAllowed, UrlRefused, type Resolver } from './url-policy.js';
import { WebhookWorker } from './webhook-worker.js';
import { WebhooksRepository, type DeliveryRow, type EndpointRow } from './webhooks.repository.js';
import { createEndpointInput, deliveriesInput, endpointIdInput, updateEndpointInput, type CreateEndpointInput, type UpdateEndpointInput } from './webhooks.schemas.js';
import type { WebhooksSettings } from './webhooks.settings.js';

export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  /** Why it is off: `failing` (deliveries failed for the configured days) or `owner`; null while enabled. */
  disabledReason: string | null;
  /** Until when the previous secret still signs beside the new one (after a rotation). */
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookEndpointWithSecret extends WebhookEndpointView {
  /** `whsec_…`: shown at creation and rotation only. */
  secret: string;
}

export interface WebhookDeliveryView {
  id: string;
  endpointId: string;
  /** The `webhook-id` header: the same on every retry and replay. */
  messageId: string;
  eventType: string;
  status: DeliveryRow['status'];
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  /** timeout, connection_refused, connection_error, dns, tls, forbidden_address, redirect or status. */
  lastError: string | null;
  lastDurationMs: number | null;
  /** The receiver's answer, first 1 KiB. */
  lastResponseBody: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * An account's webhook endpoints, their delivery log, replays and test events, and the delivery worker
 * (webhook-worker.ts). Events themselves are written by their producers through src/events/outbox.ts.
 */
export class WebhooksService {
  private readonly repository: WebhooksRepository;
  private readonly worker: WebhookWorker;
  private readonly mailer?: Mailer;

  constructor(private readonly deps: { orm: MikroORM; log: Logger; settings: WebhooksSettings; mail?: Pick<MailSettings, 'smtpUrl' | 'from' | 'language'>; brandName?: string; resolve?: Resolver }) {
    this.repository = new WebhooksRepository(deps.orm);
    if (deps.mail) this.mailer = new Mailer({ orm: deps.orm, mail: deps.mail, log: deps.log });
    this.worker = new WebhookWorker({ repository: this.repository, mailer: this.mailer, log: deps.log, settings: deps.settings, brandName: deps.brandName ?? 'Baikal', resolve: deps.resolve });
  }

  start(): void {
    if (this.deps.settings.allowInsecureUrls) this.deps.log.warn('WEBHOOKS_ALLOW_INSECURE_URLS is on: webhooks may go to plain http and local addresses (development and tests only)');
    this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker.stop();
    this.mailer?.close();
  }

  eventTypes(language: 'ru' | 'en' = 'en'): { type: WebhookEventType; description: string }[] {
    return webhookEventTypes.map((type) => ({ type, description: WEBHOOK_EVENT_TYPES[type][language] }));
  }

  async list(actor: Actor): Promise<WebhookEndpointView[]> {
    return (await this.repository.endpoints(actor.userId)).map(toEndpointView);
  }

  async create(actor: Actor, raw: CreateEndpointInput): Promise<WebhookEndpointWithSecret> {
    const input = parseInput(createEndpointInput, raw ?? {});
    const url = await this.checkUrl(input.url);
    const secret = newSecret();
    const row = await this.repository.insertWithin(
      actor.userId,
      { url, description: input.description ?? null, eventTypes: unique(input.eventTypes as WebhookEventType[]), secret, language: input.language ?? this.deps.mail?.language ?? 'en' },
      this.deps.settings.maxEndpoints,
    );
    if (!row) throw new DomainError('conflict', `An account may have at most ${this.deps.settings.maxEndpoints} webhook endpoints; delete one first`, { reason: 'too_many_webhook_endpoints' });
    this.deps.log.info({ userId: actor.userId, endpointId: row.id }, 'webhook endpoint created');
    return { ...toEndpointView(row), secret };
  }

  async update(actor: Actor, raw: UpdateEndpointInput): Promise<WebhookEndpointView> {
    const input = parseInput(updateEndpointInput, raw ?? {});
    const url = input.url === undefined ? undefined : await this.checkUrl(input.url);
    const row = await this.repository.update(actor.userId, input.id, { url, description: input.description, eventTypes: input.eventTypes && unique(input.eventTypes as WebhookEventType[]), enabled: input.enabled });
    if (!row) throw new DomainError('not_found', 'No such webhook endpoint');
    return toEndpointView(row);
  }

  async remove(actor: Actor, id: string): Promise<void> {
    const input = parseInput(endpointIdInput, { id });
    if (!(await this.repository.remove(actor.userId, input.id))) throw new DomainError('not_found', 'No such webhook endpoint');
  }

  /** A new secret; the old one keeps signing beside it for the grace period (receivers switch without a gap). */
  async rotateSecret(actor: Actor, id: string): Promise<WebhookEndpointWithSecret> {
    const input = parseInput(endpointIdInput, { id });
    const secret = newSecret();
    const row = await this.repository.rotate(actor.userId, input.id, secret, this.deps.settings.rotationGraceMs);
    if (!row) throw new DomainError('not_found', 'No such webhook endpoint');
    this.deps.log.info({ userId: actor.userId, endpointId: row.id }, 'webhook secret rotated');
    return { ...toEndpointView(row), secret };
  }

  async deliveries(actor: Actor, endpointId: string, limit?: number): Promise<WebhookDeliveryView[]> {
    const input = parseInput(deliveriesInput, { endpointId, limit });
    if (!(await this.repository.endpoint(actor.userId, input.endpointId))) throw new DomainError('not_found', 'No such webhook endpoint');
    return (await this.repository.deliveries(actor.userId, input.endpointId, input.limit)).map(toDeliveryView);
  }

  /** Sends the delivery's message again, with the same webhook-id, as a new delivery due now. */
  async replay(actor: Actor, deliveryId: string): Promise<WebhookDeliveryView> {
    const input = parseInput(endpointIdInput, { id: deliveryId });
    const row = await this.repository.replay(actor.userId, input.id);
    if (!row) throw new DomainError('not_found', 'No such webhook delivery');
    this.worker.wake();
    return toDeliveryView(row);
  }

  /** Queues a `webhook.test` event to one endpoint; answers its webhook-id. */
  async sendTest(actor: Actor, endpointId: string): Promise<string> {
    const input = parseInput(endpointIdInput, { id: endpointId });
    const endpoint = await this.repository.endpoint(actor.userId, input.id);
    if (!endpoint) throw new DomainError('not_found', 'No such webhook endpoint');
    if (!endpoint.enabled) throw new DomainError('conflict', 'The endpoint is disabled; enable it first', { reason: 'webhook_endpoint_disabled' });
    const messageId = await this.repository.enqueueTest(actor.userId, endpoint.id, { endpointId: endpoint.id, message: 'A test event from the webhooks page' });
    this.worker.wake();
    return messageId;
  }

  /** Form, scheme and every resolved address; a refusal names the field and the reason. */
  private async checkUrl(raw: string): Promise<string> {
    const allowInsecure = this.deps.settings.allowInsecureUrls;
    try {
      const url = checkUrlForm(raw, allowInsecure);
      await resolveAllowed(url, allowInsecure, this.deps.resolve);
      return url.toString();
    } catch (error) {
      if (!(error instanceof UrlRefused)) throw error;
      throw new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc: ['url'], msg: error.message, type: 'url_refused' }] });
    }
  }
}

const unique = <T>(values: T[]): T[] => [...new Set(values)];

function toEndpointView(row: EndpointRow): WebhookEndpointView {
  const graceOpen = row.previous_secret_until && new Date(row.previous_secret_until) > new Date();
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    enabled: row.enabled,
    disabledReason: row.enabled ? null : row.disabled_reason,
    previousSecretExpiresAt: graceOpen ? new Date(row.previous_secret_until!) : null,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function toDeliveryView(row: DeliveryRow): WebhookDeliveryView {
  const date = (value: Date | null) => (value ? new Date(value) : null);
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    messageId: row.message_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? date(row.next_attempt_at) : null,
    lastAttemptAt: date(row.last_attempt_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastDurationMs: row.last_duration_ms,
    lastResponseBody: row.last_response_body,
    deliveredAt: date(row.delivered_at),
    createdAt: new Date(row.created_at),
  };
}
