import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import { domainInput } from './args.js';
import { ApiKey, CreatedApiKey, CreateKeyInput } from './types/keys.types.js';

@Resolver()
export class KeysResolver {
  @Query(() => [ApiKey], { description: 'The signed-in account’s active keys, newest first.' })
  async keys(@Ctx() ctx: RequestContext): Promise<ApiKey[]> {
    return ctx.services.keys.list(requireActor(ctx));
  }

  @Mutation(() => CreatedApiKey)
  async createKey(@Ctx() ctx: RequestContext, @Arg('input', () => CreateKeyInput, { nullable: true }) input?: CreateKeyInput): Promise<CreatedApiKey> {
    const actor = requireActor(ctx);
    return ctx.services.keys.create(actor, domainInput(input, 'label', 'monthlySpendCap'));
  }

  @Mutation(() => Boolean, { description: 'Revokes a key at once; unknown or foreign ids are NOT_FOUND.' })
  async revokeKey(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<boolean> {
    await ctx.services.keys.revoke(requireActor(ctx), id);
    return true;
  }
}

/** GraphQL gives absent optional arguments as undefined and explicit nulls as null; keep both meanings. */
