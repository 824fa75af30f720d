import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { readCookie } from '../src/context.js';
import type { Services } from '../src/services.js';
import { DomainError } from '../src/shared/errors.js';
import { constantTimeEqual } from '../src/shared/ids.js';
import { accountJson, accountSummaryJson, messengerLinksJson, messengerLinkStatusJson, transactionJson } from './mappers.js';
import { authed, from, handle } from './handler.js';

/** The cookie binding a messenger sign-in to the browser that started it. */
const MESSENGER_LOGIN_COOKIE = 'baikal_messenger_login';

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

  // ---- identity (docs/cabinet.md "Identity") ----

  router.post('/verify-email', authed(async (actor, ctx, req, res) => {
    res.json(accountJson(await from('body', () => ctx.services.identity.verifyEmail(actor, req.body))));
  }));

  router.post('/resend-verification', authed(async (actor, ctx, req, res) => {
    res.status(202).json(await from('body', () => ctx.services.identity.resendVerification(actor, req.body ?? {})));
  }));

  router.post('/email/link/start', authed(async (actor, ctx, req, res) => {
    const started = await from('body', () => ctx.services.identity.startEmailLink(actor, req.body));
    res.status(202).json({ ok: started.ok, expires_at: started.expiresAt.toISOString() });
  }));

  router.post('/email/link/confirm', authed(async (actor, ctx, req, res) => {
    res.json(await from('body', () => ctx.services.identity.confirmEmailLink(actor, req.body)));
  }));

  router.get('/links', authed(async (actor, ctx, _req, res) => {
    res.json(messengerLinksJson(await ctx.services.identity.links(actor)));
  }));

  router.post('/messenger/link/start', authed(async (actor, ctx, _req, res) => {
    const started = await ctx.services.identity.startMessengerLink(actor);
    res.json({ token: started.token, bot_url: started.botUrl, expires_at: started.expiresAt.toISOString() });
  }));

  router.get('/messenger/link/status', authed(async (actor, ctx, req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    res.json(messengerLinkStatusJson(await from('query', () => ctx.services.identity.messengerLinkStatus(actor, { token: token as string }))));
  }));

  router.post('/messenger/link/confirm', authed(async (actor, ctx, req, res) => {
    const confirmed = await from('body', () => ctx.services.identity.confirmMessengerLink(actor, req.body));
    res.json({ status: confirmed.status, user_id: confirmed.userId });
  }));

  // Signing in with the messenger (no session needed): start, the bot confirms on its webhook, the browser polls callback.
  // The sign-in is bound to the browser that started it (login CSRF: a link to the callback with someone
  // else's confirmed token must not sign a victim's browser into that account): start sets a cookie holding
  // the token, sent only by same-site requests to these paths, and the callback requires it.
  router.get('/messenger/start', handle(async (ctx, req, res) => {
    const started = await ctx.services.identity.startMessengerLogin(ctx.caller);
    res.cookie(MESSENGER_LOGIN_COOKIE, started.token, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/auth/messenger', expires: started.expiresAt });
    res.json({ token: started.token, bot_url: started.botUrl, expires_at: started.expiresAt.toISOString() });
  }));

  router.get('/messenger/callback', handle(async (ctx, req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    const bound = readCookie(req.headers.cookie, MESSENGER_LOGIN_COOKIE);
    // A malformed token is the service's 422; a well-formed one must be this browser's own.
    if (token && token.length >= 32 && token.length <= 256 && !(bound && constantTimeEqual(bound, token))) {
      throw new DomainError('forbidden', 'Finish signing in in the browser that started it', { reason: 'login_not_bound' });
    }
    const signedIn = await from('query', () => ctx.services.accounts.signInWithMessenger(ctx.caller, { token: token as string }));
    res.clearCookie(MESSENGER_LOGIN_COOKIE, { path: '/auth/messenger' });
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    res.setHeader('x-session-token', signedIn.sessionToken);
    res.status(200).json(accountJson(signedIn.account));
  }));

  router.delete('/messenger/link', authed(async (actor, ctx, _req, res) => {
    await ctx.services.identity.unlinkMessenger(actor);
    res.status(204).end();
  }));

  return router;
}

/** POST /auth/messenger/webhook: no session; mounted with a raw body parser (the signature covers the bytes). */
export function messengerWebhook(services: Services): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    services.identity.handleWebhook(body, req.get('x-messenger-signature')).then((result) => {
      if (result.status !== 200) {
        res.status(400).json({ detail: 'Event refused', code: 'invalid_event' });
        return;
      }
      res.json({ ok: true, outcome: result.outcome, ...(result.token ? { token: result.token, expires_at: result.expiresAt!.toISOString() } : {}) });
    }, next);
  };
}
