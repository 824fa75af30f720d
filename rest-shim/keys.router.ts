import { Router } from 'express';
import { authed, from, SpecNames } from './handler.js';
import { createdKeyJson, keyJson } from './mappers.js';

/** SPEC.md's names for the key inputs' multi-word fields. */
const KEY_FIELDS = new SpecNames(['provider_family', 'route_group', 'pricing_plan', 'monthly_spend_cap']);
const KEY_PATH = new SpecNames(['key_id']);

/** SPEC.md 4.2. */
export function keysRouter(): Router {
  const router = Router();

  router.get('/', authed(async (actor, ctx, _req, res) => {
    res.json((await ctx.services.keys.list(actor)).map(keyJson));
  }));

  router.post('/', authed(async (actor, ctx, req, res) => {
    const input = KEY_FIELDS.in('body', req.body ?? {});
    const created = await from('body', () => ctx.services.keys.create(actor, input as never), KEY_FIELDS);
    res.status(201).json(createdKeyJson(created));
  }));

  router.delete('/:key_id', authed(async (actor, ctx, req, res) => {
    await from('path', () => ctx.services.keys.revoke(actor, String(req.params.key_id)), KEY_PATH);
    res.status(204).end();
  }));

  return router;
}
