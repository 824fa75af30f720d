import type { AccountEventHub } from '../events/account-event-hub.js';
import type { CommittedBatch } from './usage-recorder.js';

/** The error code of a request the key's monthly spend cap refused (src/billing/wallets.ts). */
const CAP_REFUSED = '"spend_cap_reached"';

/**
 * A committed usage batch as account events: per account one `usage` event carrying its records (coalesced), and
 * per key whose monthly cap refused requests in the batch one `monthly_cap_reached` key event. Records travel as
 * the JSON they were written from; nothing is parsed unless a refusal is in it.
 */
export function announceUsage(hub: AccountEventHub, batch: CommittedBatch, keyIdOf: (recordJson: string) => string | null): void {
  for (const [userId, records] of batch.records) {
    hub.publishJson(userId, 'usage', () => `{"kind":"usage","records":[${records.join(',')}]}`);
    const refusedByCap = new Map<string, number>();
    for (const json of records) {
      if (!json.includes(CAP_REFUSED)) continue;
      const keyId = keyIdOf(json);
      if (keyId) refusedByCap.set(keyId, (refusedByCap.get(keyId) ?? 0) + 1);
    }
    for (const [keyId, refused] of refusedByCap) hub.publish(userId, { kind: 'key', type: 'monthly_cap_reached', keyId, limit: 'monthly_spend_cap', refused, at: new Date() });
  }
}
