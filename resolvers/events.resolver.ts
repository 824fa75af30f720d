import { Arg, ID, Resolver, Root, Subscription } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import type { BalanceView } from '../src/billing/balance-events.js';
import type { AccountEvent, KeyEvent as KeyEventPayload } from '../src/events/account-event-hub.js';
import { formatUsd, money } from '../src/shared/money.js';
import { usageEventOf } from '../src/usage/usage-recorder.js';
import { BalanceChange, KeyEvent, KeyEventType, UsageRecorded } from './types/events.types.js';
import { toUsageEvent } from './usage.resolver.js';

type Subscribe = { context: RequestContext; args: Record<string, unknown> };

type Pick<T> = (event: AccountEvent) => T | null | Promise<T | null>;

/**
 * The subscriber's own account events (src/events/account-event-hub.ts), filtered and shaped by `pick`; events
 * `pick` returns null for are skipped. Ends when the client completes the subscription. The session is checked
 * here, before the stream starts: an error thrown while a stream runs reaches the client only as an internal one.
 */
function accountEvents<T>(context: RequestContext, pick: Pick<T>, first?: () => Promise<T>): AsyncGenerator<T> {
  return eventsOf(context, requireActor(context).userId, pick, first);
}

async function* eventsOf<T>(context: RequestContext, userId: string, pick: Pick<T>, first?: () => Promise<T>): AsyncGenerator<T> {
  const stream = context.services.events.subscribe(userId);
  try {
    await stream.ready;
    if (first) yield await first();
    for await (const event of stream) {
      const picked = await pick(event);
      if (picked !== null) yield picked;
    }
  } finally {
    await stream.return();
  }
}

@Resolver()
export class EventsResolver {
  @Subscription(() => BalanceChange, {
    description:
      'The subscriber’s balances: first as they are now, then after every committed ledger row (usage batches, top-ups, bonuses, adjustments, video settlements), with the row.',
    subscribe: ({ context }: Subscribe) => {
      const { balanceEvents } = context.services;
      const userId = requireActor(context).userId;
      return accountEvents<BalanceView>(context, (event) => (event.kind === 'balance' ? balanceEvents.withHolds(userId, event) : null), () => balanceEvents.snapshot(userId));
    },
  })
  balanceChanged(@Root() event: BalanceView): BalanceChange {
    return event;
  }

  @Subscription(() => UsageRecorded, {
    description: 'The subscriber’s requests as they are billed (committed), optionally one key’s; coalesced per batch (about every 100 ms under load).',
    subscribe: ({ context, args }: Subscribe) =>
      accountEvents(context, (event) => {
        if (event.kind !== 'usage') return null;
        const keyId = (args.apiKeyId as string | null | undefined) ?? null;
        const events = event.records.map(usageEventOf).filter((view) => keyId === null || view.apiKeyId === keyId);
        return events.length ? { events: events.map(toUsageEvent), amountUsd: formatUsd(events.reduce((sum, view) => sum.plus(view.amountUsd), money(0))) } : null;
      }),
  })
  usageRecorded(@Root() batch: UsageRecorded, @Arg('apiKeyId', () => ID, { nullable: true, description: 'Only this key’s requests.' }) _apiKeyId?: string | null): UsageRecorded {
    return batch;
  }

  @Subscription(() => KeyEvent, {
    description: 'Events of the subscriber’s keys (optionally one): created, revoked, monthly cap reached, a limit refusing requests.',
    subscribe: ({ context, args }: Subscribe) =>
      accountEvents(context, (event) => (event.kind === 'key' && (args.keyId == null || event.keyId === args.keyId) ? event : null)),
  })
  keyEvents(@Root() event: KeyEventPayload, @Arg('keyId', () => ID, { nullable: true, description: 'Only this key’s events.' }) _keyId?: string | null): KeyEvent {
    return { ...event, type: event.type as KeyEventType };
  }
}
