import { Router } from 'express';
import { authed, from } from './handler.js';
import { createdKeyJson, keyJson } from './mappers.js';

/** SPEC.md 4.2. */
export function keysRouter(): Router {
  const router = Router();

  router.get('/', authed(async (actor, ctx, _req, res) => {
    res.json((await ctx.services.keys.list(actor)).map(keyJson));
  }));

  router.post('/', authed(async (actor, ctx, req, res) => {
    const created = await from('body', () => ctx.services.keys.create(actor, req.body ?? {}));
    res.status(201).json(createdKeyJson(created));
  }));

  router.delete('/:key_id', authed(async (actor, ctx, req, res) => {
    await from('path', () => ctx.services.keys.revoke(actor, String(req.params.key_id)));
    res.status(204).end();
  }));

  return router;
}
