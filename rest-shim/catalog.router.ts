import { Router } from 'express';
import { authed, handle } from './handler.js';
import { catalogJson } from './mappers.js';

/** SPEC.md 4.3: the public catalog, and the part of it the signed-in user's keys reach. */
export function catalogRouter(): Router {
  const router = Router();

  router.get('/models', handle(async (ctx, _req, res) => {
    res.json(catalogJson(ctx.services.catalog.publicCatalog()));
  }));

  router.get('/models/me', authed(async (actor, ctx, _req, res) => {
    res.json(catalogJson(ctx.services.catalog.viewFor(await ctx.services.keys.scopesOf(actor.userId))));
  }));

  return router;
}
