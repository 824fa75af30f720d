import { Router } from 'express';
import { z } from 'zod';
import { createKeyInput, keyIdInput } from '../src/keys/keys.schemas.js';
import { authed, SpecNames, withInput } from './handler.js';
import { createdKeyAnswer, createdKeyJson, keyAnswer, keyJson } from './mappers.js';
import { reply, routes, serve } from './route.js';

/** SPEC.md 4.2. */
export const KEY_ROUTES = routes('/keys', 'keys', {
  list: { method: 'get', at: '/', summary: 'The account’s API keys', access: 'session', answers: { 200: { description: 'Array of Key', json: z.array(keyAnswer) } } },
  create: {
    method: 'post',
    at: '/',
    summary: 'Create an API key (the raw key is shown once)',
    access: 'session',
    body: new SpecNames(createKeyInput),
    optionalBody: true,
    answers: { 201: { description: 'Key created', json: createdKeyAnswer } },
  },
  revoke: { method: 'delete', at: '/:key_id', summary: 'Revoke an API key', access: 'session', params: new SpecNames(keyIdInput), answers: { 204: { description: 'Revoked' } } },
});

export function keysRouter(): Router {
  const router = Router();
  const { list, create, revoke } = KEY_ROUTES;

  serve(router, list, authed(async (actor, ctx, _req, res) => {
    reply(res, list, 200, (await ctx.services.keys.list(actor)).map(keyJson));
  }));

  serve(router, create, authed(async (actor, ctx, req, res) => {
    const created = await withInput('body', create.body, req.body ?? {}, (input) => ctx.services.keys.create(actor, input));
    reply(res, create, 201, createdKeyJson(created));
  }));

  serve(router, revoke, authed(async (actor, ctx, req, res) => {
    await withInput('path', revoke.params, req.params, ({ keyId }) => ctx.services.keys.revoke(actor, keyId));
    res.status(204).end();
  }));

  return router;
}
