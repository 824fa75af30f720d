import { Router } from 'express';
import { accountJson, accountSummaryJson, transactionJson } from './mappers.js';
import { authed, from, handle } from './handler.js';

/** SPEC.md 4.1, the account slice. */
export function authRouter(): Router {
  const router = Router();

  router.post('/register', handle(async (ctx, req, res) => {
    const signedIn = await from('body', () => ctx.services.accounts.register(ctx.caller, req.body));
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    res.setHeader('x-session-token', signedIn.sessionToken);
    res.status(201).json(accountJson(signedIn.account));
  }));

  router.post('/login', handle(async (ctx, req, res) => {
    const signedIn = await from('body', () => ctx.services.accounts.login(ctx.caller, req.body));
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    res.setHeader('x-session-token', signedIn.sessionToken);
    res.status(200).json(accountJson(signedIn.account));
  }));

  router.get('/me', authed(async (actor, ctx, _req, res) => {
    res.json(accountJson(await ctx.services.accounts.me(actor)));
  }));

  router.post('/logout', authed(async (actor, ctx, _req, res) => {
    await ctx.services.accounts.logout(actor);
    ctx.sessionCookie.clear();
    res.status(204).end();
  }));

  router.get('/summary', authed(async (actor, ctx, _req, res) => {
    res.json(accountSummaryJson(await ctx.services.accounts.summary(actor)));
  }));

  router.get('/transactions', authed(async (actor, ctx, req, res) => {
    const rows = await from('query', () => ctx.services.accounts.transactions(actor, { limit: req.query.limit as string | undefined }));
    res.json(rows.map(transactionJson));
  }));

  return router;
}
