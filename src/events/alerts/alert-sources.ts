import { Topics, type PubSub } from '../../shared/pubsub.js';
import type { AlertEvent } from './alerts.schemas.js';

/**
 * The pub/sub the payments and video services publish to, with the alerts listening in: an invoice that
 * became paid and a video task that finished, each heard in the process that committed it (the bus copies other
 * processes receive arrive through the event target, not through `publish`). The services stay unaware of alerts.
 */
export function withAlertEvents(pubsub: PubSub, heard: (userId: string, event: AlertEvent) => void): PubSub {
  const forward = pubsub.publish as (...args: unknown[]) => void;
  const publish = ((...args: unknown[]) => {
    forward(...args);
    const [topic, userId, payload] = args as [string, unknown, Record<string, unknown> | undefined];
    if (!payload || typeof userId !== 'string') return;
    if (topic === Topics.InvoiceUpdated && payload.status === 'paid') {
      heard(userId, { kind: 'invoice_paid', invoiceId: String(payload.id), usdCredit: String(payload.usdCredit), bonusUsd: String(payload.bonusUsd) });
    } else if (topic === Topics.VideoTaskUpdated && (payload.status === 'completed' || payload.status === 'failed')) {
      heard(userId, { kind: 'video_finished', taskId: String(payload.id), model: String(payload.model), status: payload.status });
    }
  }) as PubSub['publish'];
  return { publish, subscribe: pubsub.subscribe };
}
