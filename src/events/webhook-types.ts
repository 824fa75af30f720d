/**
 * The account events Baikal delivers to webhook endpoints (docs/webhooks.md). Every delivery body is the
 * Standard Webhooks envelope `{ "type", "timestamp" (ISO 8601, when the event happened), "data" }`; the
 * shapes of `data` below are the customer-facing views (the cabinet's and the API's), never upstream names,
 * hosts or credentials. Adding a type: a line in WEBHOOK_EVENT_TYPES and its payload in WebhookEventData.
 */
export const WEBHOOK_EVENT_TYPES = {
  'invoice.paid': { en: 'An invoice was paid and its amount (and bonus) credited.', ru: 'Счёт оплачен, сумма (и бонус) зачислены.' },
  'key.created': { en: 'An API key was created (the secret itself is never sent).', ru: 'Создан API-ключ (сам секрет не передаётся).' },
  'key.revoked': { en: 'An API key was revoked.', ru: 'API-ключ отозван.' },
  'video.completed': { en: 'A video generation finished and was charged.', ru: 'Генерация видео завершена и оплачена.' },
  'video.failed': { en: 'A video generation failed; nothing was charged.', ru: 'Генерация видео не удалась; списаний нет.' },
  'alert.triggered': { en: 'An alert you set was triggered.', ru: 'Сработало настроенное вами оповещение.' },
  'webhook.test': { en: 'A test event sent from the cabinet.', ru: 'Тестовое событие, отправленное из кабинета.' },
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;

export const webhookEventTypes = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEventType[];

/** An API key as its owner sees it (no secret, no hint). */
export interface WebhookKeyData {
  id: string;
  label: string | null;
  providerFamily: string;
  routeGroup: string;
  createdAt: Date | string;
}

/** What `data` holds for each type. */
export interface WebhookEventData {
  /** The invoice as `invoices` shows it: id, status `paid`, amounts (decimal strings), method, paidAt. */
  'invoice.paid': { invoice: Record<string, unknown> };
  'key.created': { key: WebhookKeyData };
  'key.revoked': { key: { id: string; revokedAt: Date | string } };
  /** The task as `GET /v1/videos/{id}` shows it (status `completed`, seconds, model). */
  'video.completed': { video: Record<string, unknown> };
  /** The task with its `error` ({code, message}); nothing was charged. */
  'video.failed': { video: Record<string, unknown> };
  /**
   * Extensible: `alert` names the alert that fired (its id or kind); alerts add their own fields beside it
   * (threshold, value, ...). Receivers must ignore fields they do not know.
   */
  'alert.triggered': { alert: string; [detail: string]: unknown };
  'webhook.test': { endpointId: string; message: string };
}

export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  userId: string;
  type: T;
  data: WebhookEventData[T];
}

/** The Standard Webhooks envelope every delivery carries. */
export function webhookEnvelope(type: WebhookEventType, data: unknown, at: Date): { type: string; timestamp: string; data: unknown } {
  return { type, timestamp: at.toISOString(), data };
}
