import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import type { AlertSettingsInput as ServiceInput } from '../src/events/alerts/alerts.schemas.js';
import { domainInput, type SameFields } from './args.js';
import { AlertSettings, AlertSettingsInput } from './types/alerts.types.js';

const sameFields: SameFields<AlertSettingsInput, ServiceInput> = true;
void sameFields;

/** GraphQL gives nested inputs as class instances; the service validates plain data. */
const plain = (input: AlertSettingsInput): ServiceInput => JSON.parse(JSON.stringify(domainInput(input))) as ServiceInput;

@Resolver()
export class AlertsResolver {
  @Query(() => AlertSettings, { description: 'The signed-in account’s alerts and the channels that can reach it.' })
  async alertSettings(@Ctx() ctx: RequestContext): Promise<AlertSettings> {
    return ctx.services.alerts.settingsOf(requireActor(ctx));
  }

  @Mutation(() => AlertSettings, {
    description: 'Replaces the account’s alerts. Refused (BAD_USER_INPUT) for negative amounts, a percent outside 1-100, an unknown key, or a rule none of whose channels can reach the account.',
  })
  async updateAlertSettings(@Ctx() ctx: RequestContext, @Arg('input', () => AlertSettingsInput) input: AlertSettingsInput): Promise<AlertSettings> {
    return ctx.services.alerts.update(requireActor(ctx), plain(input));
  }
}
