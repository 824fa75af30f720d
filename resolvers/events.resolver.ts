import { Arg, ID, Resolver, Root, Subscription } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import type { BalanceView } from '../src/billing/balance-events.js';
import type { AccountEvent, KeyEvent as KeyEventPayload } from '../src/events/account-event-hub.js';
import { formatUsd, money } from '../src/shared/money.js';
import { usageEventOf } from '../src/usage/usage-recorder.js';
import { BalanceChange, KeyEvent, KeyEventType, UsageRecorded } from './types/events.types.js';
import { toUsageEvent } from './usage.resolver.js';
import { OrganizationAudience, type OrganizationFeed } from './organization-events.js';

type Subscribe = { context: RequestContext; args: Record<string, unknown> };

type Pick<T> = (event: AccountEvent) => T | null | Promise<T | null>;

/**
 * The events of one ledger (the subscriber's account, or an organization's: src/events/account-event-hub.ts),
 * filtered and shaped by `pick`; events `pick` returns null for are skipped. Ends when the client completes the
 * subscription, or when an organization's member is no longer one. The session and the membership are checked
 * before the stream starts (`ledgerOf`): an error thrown while a stream runs reaches the client only as an internal one.
 */
async function* eventsOf<T>(context: RequestContext, userId: string, pick: Pick<T>, first?: () => Promise<T>, audience?: OrganizationAudience): AsyncGenerator<T> {
  const stream = context.services.events.subscribe(userId);
  try {
    await stream.ready;
    if (first) yield await first();
    for await (const event of stream) {
      // A member removed while listening hears nothing more: the stream ends.
      if (audience && !(await audience.stillMember())) return;
      const picked = await pick(event);
      if (picked !== null) yield picked;
    }
  } finally {
    await stream.return();
  }
}

/** The ledger a subscription follows: the caller's own account, or (with `organizationId`) an organization's, as the member may hear it. */
async function ledgerOf(context: RequestContext, args: Record<string, unknown>, feed: OrganizationFeed): Promise<{ ledgerId: string; audience?: OrganizationAudience }> {
  const organizationId = args.organizationId as string | null | undefined;
  if (organizationId == null) return { ledgerId: requireActor(context).userId };
  const audience = await OrganizationAudience.open(context, organizationId, feed);
  return { ledgerId: audience.organizationId, audience };
}

/** Usage of one batch as the subscriber sees it: optionally one key's, and (in an organization) the keys they may hear. */
async function usageOf(event: AccountEvent, keyId: string | null, audience?: OrganizationAudience): Promise<UsageRecorded | null> {
  if (event.kind === 'key' && event.type === 'created') await audience?.hearsKey(event.keyId, true);
  if (event.kind !== 'usage') return null;
  const events: ReturnType<typeof usageEventOf>[] = [];
  for (const view of event.records.map(usageEventOf)) {
    if ((keyId === null || view.apiKeyId === keyId) && (!audience || (await audience.hearsKey(view.apiKeyId)))) events.push(view);
  }
  return events.length ? { events: events.map(toUsageEvent), amountUsd: formatUsd(events.reduce((sum, view) => sum.plus(view.amountUsd), money(0))) } : null;
}

const ORGANIZATION_ARG = { nullable: true, description: 'An organization of the caller’s: its events (its ledger) instead of the account’s; NOT_FOUND for any other id.' } as const;

@Resolver()
export class EventsResolver {
  @Subscription(() => BalanceChange, {
    description:
      'The subscriber’s balances: first as they are now, then after every committed ledger row (usage batches, top-ups, bonuses, adjustments, video settlements), with the row. With `organizationId`: the organization’s wallet (owner, admin, billing).',
    subscribe: async ({ context, args }: Subscribe) => {
      const { balanceEvents } = context.services;
      const { ledgerId, audience } = await ledgerOf(context, args, 'balance');
      const pick: Pick<BalanceView> = (event) => (event.kind === 'balance' ? balanceEvents.withHolds(ledgerId, event) : null);
      return eventsOf(context, ledgerId, pick, () => balanceEvents.snapshot(ledgerId), audience);
    },
  })
  balanceChanged(@Root() event: BalanceView, @Arg('organizationId', () => ID, ORGANIZATION_ARG) _organizationId?: string | null): BalanceChange {
    return event;
  }

  @Subscription(() => UsageRecorded, {
    description:
      'The subscriber’s requests as they are billed (committed), optionally one key’s; coalesced per batch (about every 100 ms under load). With `organizationId`: the organization’s requests, every member’s for owners, admins and billing, one’s own keys’ for a member.',
    subscribe: async ({ context, args }: Subscribe) => {
      const { ledgerId, audience } = await ledgerOf(context, args, 'usage');
      const keyId = (args.apiKeyId as string | null | undefined) ?? null;
      return eventsOf(context, ledgerId, (event) => usageOf(event, keyId, audience), undefined, audience);
    },
  })
  usageRecorded(
    @Root() batch: UsageRecorded,
    @Arg('apiKeyId', () => ID, { nullable: true, description: 'Only this key’s requests.' }) _apiKeyId?: string | null,
    @Arg('organizationId', () => ID, ORGANIZATION_ARG) _organizationId?: string | null,
  ): UsageRecorded {
    return batch;
  }

  @Subscription(() => KeyEvent, {
    description:
      'Events of the subscriber’s keys (optionally one): created, revoked, monthly cap reached, a limit refusing requests. With `organizationId`: the organization’s keys, every key for owners and admins, one’s own for the others.',
    subscribe: async ({ context, args }: Subscribe) => {
      const { ledgerId, audience } = await ledgerOf(context, args, 'keys');
      const pick: Pick<KeyEventPayload> = async (event) => {
        if (event.kind !== 'key' || (args.keyId != null && event.keyId !== args.keyId)) return null;
        return !audience || (await audience.hearsKey(event.keyId, event.type === 'created')) ? event : null;
      };
      return eventsOf(context, ledgerId, pick, undefined, audience);
    },
  })
  keyEvents(
    @Root() event: KeyEventPayload,
    @Arg('keyId', () => ID, { nullable: true, description: 'Only this key’s events.' }) _keyId?: string | null,
    @Arg('organizationId', () => ID, ORGANIZATION_ARG) _organizationId?: string | null,
  ): KeyEvent {
    return { ...event, type: event.type as KeyEventType };
  }
}
