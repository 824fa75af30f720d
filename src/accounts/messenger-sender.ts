import { createHmac } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';
import type { MessengerSettings } from './accounts.settings.js';

/** A message to a linked user may take this long before it counts as not sent. */
const SEND_TIMEOUT_MS = 5_000;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: the scheme the bot's webhook is signed with, both ways. */
export function messengerSignature(secret: string, body: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/**
 * Sends a message to a linked messenger user through the bot adapter: `POST sendUrl` with `{user_id, text}`,
 * signed with the webhook's secret in `x-messenger-signature`, so the bot knows it is the gateway's. The
 * operator's `messenger.sendUrl` names the adapter; without it nothing is sent (`available` is false).
 */
export class MessengerSender {
  constructor(private readonly deps: { messenger: MessengerSettings | null; clock: Clock; log: Logger }) {}

  get available(): boolean {
    return Boolean(this.deps.messenger?.sendUrl);
  }

  /** True when the adapter took the message; failures are logged, never thrown (an alert must not break its caller). */
  async send(messengerUserId: string, text: string): Promise<boolean> {
    const m = this.deps.messenger;
    if (!m?.sendUrl) return false;
    const body = JSON.stringify({ user_id: messengerUserId, text });
    try {
      const response = await fetch(m.sendUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-messenger-signature': messengerSignature(m.webhookSecret, body, this.deps.clock.now().getTime()) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await response.body?.cancel();
      if (!response.ok) this.deps.log.warn({ status: response.status }, 'messenger message not taken');
      return response.ok;
    } catch (error) {
      this.deps.log.warn({ err: (error as Error).message }, 'messenger message not sent');
      return false;
    }
  }
}
