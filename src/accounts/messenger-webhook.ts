import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { messengerWebhookEvent } from './accounts.schemas.js';
import type { MessengerSettings } from './accounts.settings.js';
import type { MessengerLinking } from './messenger-link.js';
import { LOGIN_PREFIX, type MessengerLogin } from './messenger-login.js';

/** A signature's timestamp may be this far from our clock (either way) before the event counts as stale. */
const WEBHOOK_TOLERANCE_S = 300;

export interface MessengerWebhookResult {
  status: 200 | 400;
  outcome: string;
  /** A bot-initiated link: the token the bot shows its user, to confirm in the cabinet. */
  token?: string;
  expiresAt?: Date;
}

/**
 * Checks `x-messenger-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`;
 * null when the event is signed with the secret and recent, else the outcome to answer.
 */
export function signatureProblem(secret: string, rawBody: Buffer, header: string | undefined, nowMs: number): 'bad_signature' | 'stale' | null {
  const parts = Object.fromEntries((header ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(parts.v1 ?? '')) return 'bad_signature';
  if (Math.abs(nowMs / 1000 - t) > WEBHOOK_TOLERANCE_S) return 'stale';
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  const given = Buffer.from(parts.v1!, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : 'bad_signature';
}

/**
 * The bot's webhook: body `{event_id?, user: {id, name?}, text}`. `/start <token>` finishes a cabinet-initiated
 * link, `/start login_<token>` confirms a sign-in, and a bare `/start` opens a bot-initiated link and answers its
 * token. Unsigned, forged or stale events change nothing.
 */
export class MessengerWebhook {
  constructor(private readonly deps: { clock: Clock; messenger: MessengerSettings | null; linking: MessengerLinking; login: MessengerLogin }) {}

  async handle(rawBody: Buffer, signatureHeader: string | undefined): Promise<MessengerWebhookResult> {
    const m = this.deps.messenger;
    if (!m) return { status: 400, outcome: 'not_configured' };
    const problem = signatureProblem(m.webhookSecret, rawBody, signatureHeader, this.deps.clock.now().getTime());
    if (problem) return { status: 400, outcome: problem };

    let event;
    try {
      event = messengerWebhookEvent.parse(JSON.parse(rawBody.toString('utf8')));
    } catch {
      return { status: 400, outcome: 'bad_payload' };
    }
    const match = /^\/start(?:\s+(\S+))?\s*$/.exec(event.text.trim());
    if (!match) return { status: 200, outcome: 'ignored' };
    const name = event.user.name ?? null;
    const token = match[1];
    if (!token) {
      const issued = await this.deps.linking.issueBotToken(event.user.id, name);
      return { status: 200, outcome: 'token_issued', ...issued };
    }
    if (token.startsWith(LOGIN_PREFIX)) return { status: 200, outcome: await this.deps.login.confirm(token.slice(LOGIN_PREFIX.length), event.user.id, name) };
    return { status: 200, outcome: await this.deps.linking.finishCabinetLink(token, event.user.id, name) };
  }
}
