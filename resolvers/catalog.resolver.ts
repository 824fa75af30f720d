import { Ctx, Query, Resolver } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import { CatalogModel } from './types/catalog.types.js';

@Resolver()
export class CatalogResolver {
  @Query(() => [CatalogModel], { description: 'Every public model with its groups and public prices.' })
  catalogModels(@Ctx() ctx: RequestContext): CatalogModel[] {
    return ctx.services.catalog.publicCatalog().models as CatalogModel[];
  }

  @Query(() => [CatalogModel], { description: 'The models the signed-in user’s keys can reach, at their plans’ prices.' })
  async myCatalogModels(@Ctx() ctx: RequestContext): Promise<CatalogModel[]> {
    const actor = requireActor(ctx);
    return ctx.services.catalog.viewFor(await ctx.services.keys.scopesOf(actor.userId)).models as CatalogModel[];
  }
}
