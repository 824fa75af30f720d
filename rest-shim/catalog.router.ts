import { Router } from 'express';
import { authed, handle } from './handler.js';
import { catalogAnswer, catalogJson } from './mappers.js';
import { reply, routes, serve } from './route.js';

/** SPEC.md 4.3: the public catalog, and the part of it the signed-in user's keys reach. */
export const CATALOG_ROUTES = routes('/catalog', 'catalog', {
  models: { method: 'get', at: '/models', summary: 'The public catalog: models, groups and public prices', access: 'public', answers: { 200: { description: 'Catalog', json: catalogAnswer } } },
  myModels: { method: 'get', at: '/models/me', summary: 'The models the signed-in user’s keys reach', access: 'session', answers: { 200: { description: 'Catalog', json: catalogAnswer } } },
});

export function catalogRouter(): Router {
  const router = Router();

  serve(router, CATALOG_ROUTES.models, handle(async (ctx, _req, res) => {
    reply(res, CATALOG_ROUTES.models, 200, catalogJson(ctx.services.catalog.publicCatalog()));
  }));

  serve(router, CATALOG_ROUTES.myModels, authed(async (actor, ctx, _req, res) => {
    reply(res, CATALOG_ROUTES.myModels, 200, catalogJson(ctx.services.catalog.viewFor(await ctx.services.keys.scopesOf(actor.userId))));
  }));

  return router;
}
