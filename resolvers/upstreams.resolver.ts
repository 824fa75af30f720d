import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import type { CreateUpstreamInput as CreateUpstreamData, CredentialInput, UpdateUpstreamInput as UpdateUpstreamData } from '../src/upstreams/upstreams.schemas.js';
import { domainInput } from './args.js';
import {
  AdminUpstream,
  CreateUpstreamInput,
  UpdateUpstreamInput,
  UpstreamCredentialInput,
  UpstreamPriceInput,
  UpstreamRouteInput,
} from './types/upstreams.types.js';

/** GraphQL leaves a nested field out as null; a domain input leaves it out. */
function nested<T extends object>(value: T | null | undefined): Partial<T> | undefined {
  return value ? (domainInput(value) as Partial<T>) : undefined;
}

/** A credential: a null `maxConcurrent` means "no limit of its own", so it is kept. */
function credential(input: UpstreamCredentialInput): CredentialInput {
  return domainInput(input, 'maxConcurrent') as CredentialInput;
}

/** Upstream providers, their credentials, routes and prices; every operation answers FORBIDDEN unless the caller is an admin. */
@Resolver()
export class UpstreamsResolver {
  @Query(() => [AdminUpstream], { description: 'Admin: every upstream, by id. Secrets are never shown.' })
  async adminUpstreams(@Ctx() ctx: RequestContext): Promise<AdminUpstream[]> {
    return ctx.services.managedUpstreams.list(requireActor(ctx));
  }

  @Query(() => AdminUpstream, { description: 'Admin: one upstream (NOT_FOUND for an unknown id).' })
  async adminUpstream(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<AdminUpstream> {
    return ctx.services.managedUpstreams.get(requireActor(ctx), { id });
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: a new upstream; routing takes it at once (every process).' })
  async createUpstream(@Ctx() ctx: RequestContext, @Arg('input', () => CreateUpstreamInput) input: CreateUpstreamInput): Promise<AdminUpstream> {
    const data = {
      ...domainInput(input),
      timeouts: nested(input.timeouts),
      health: nested(input.health),
      credentials: input.credentials?.map(credential),
      routes: input.routes?.map((route) => domainInput(route)),
      prices: input.prices?.map((price) => domainInput(price)),
    };
    return ctx.services.managedUpstreams.create(requireActor(ctx), data as CreateUpstreamData);
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: changes an upstream’s settings (absent fields keep theirs).' })
  async updateUpstream(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateUpstreamInput) input: UpdateUpstreamInput,
  ): Promise<AdminUpstream> {
    const data = { ...domainInput(input), id, timeouts: nested(input.timeouts), health: nested(input.health) };
    return ctx.services.managedUpstreams.update(requireActor(ctx), data as UpdateUpstreamData);
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: takes an upstream out of routing, or back in.' })
  async setUpstreamEnabled(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string, @Arg('enabled', () => Boolean) enabled: boolean): Promise<AdminUpstream> {
    return ctx.services.managedUpstreams.setEnabled(requireActor(ctx), { id, enabled });
  }

  @Mutation(() => Boolean, { description: 'Admin: deletes an upstream with its credentials, routes and prices (CONFLICT while another falls back to it).' })
  async deleteUpstream(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<boolean> {
    return ctx.services.managedUpstreams.remove(requireActor(ctx), { id });
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: adds a credential to an upstream’s pool; a secret is stored encrypted and never shown again.' })
  async addUpstreamCredential(
    @Ctx() ctx: RequestContext,
    @Arg('upstreamId', () => ID) upstreamId: string,
    @Arg('input', () => UpstreamCredentialInput) input: UpstreamCredentialInput,
  ): Promise<AdminUpstream> {
    return ctx.services.managedUpstreams.addCredential(requireActor(ctx), { ...credential(input), upstreamId });
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: changes a credential (label, enabled, limit, or its secret or variable); answers its upstream.' })
  async updateUpstreamCredential(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpstreamCredentialInput) input: UpstreamCredentialInput,
  ): Promise<AdminUpstream> {
    return ctx.services.managedUpstreams.updateCredential(requireActor(ctx), { ...credential(input), id });
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: removes a credential from its pool; answers its upstream.' })
  async deleteUpstreamCredential(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<AdminUpstream> {
    return ctx.services.managedUpstreams.removeCredential(requireActor(ctx), { id });
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: replaces an upstream’s routes; each model must be offered in its group by the catalog.' })
  async setUpstreamRoutes(
    @Ctx() ctx: RequestContext,
    @Arg('upstreamId', () => ID) upstreamId: string,
    @Arg('routes', () => [UpstreamRouteInput]) routes: UpstreamRouteInput[],
  ): Promise<AdminUpstream> {
    return ctx.services.managedUpstreams.setRoutes(requireActor(ctx), { upstreamId, routes: routes.map((route) => domainInput(route)) });
  }

  @Mutation(() => AdminUpstream, { description: 'Admin: replaces what an upstream charges us, per catalog model.' })
  async setUpstreamPrices(
    @Ctx() ctx: RequestContext,
    @Arg('upstreamId', () => ID) upstreamId: string,
    @Arg('prices', () => [UpstreamPriceInput]) prices: UpstreamPriceInput[],
  ): Promise<AdminUpstream> {
    return ctx.services.managedUpstreams.setPrices(requireActor(ctx), { upstreamId, prices: prices.map((price) => domainInput(price)) });
  }
}
