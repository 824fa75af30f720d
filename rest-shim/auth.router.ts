import { z } from 'zod';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { readCookie } from '../src/context.js';
import type { Services } from '../src/services.js';
import { DomainError } from '../src/shared/errors.js';
import { constantTimeEqual } from '../src/shared/ids.js';
import {
  emailLinkConfirmInput,
  emailLinkStartInput,
  loginInput,
  messengerStatusQuery,
  messengerTokenInput,
  registerInput,
  resendVerificationInput,
  transactionsQuery,
  verifyEmailInput,
} from '../src/accounts/accounts.schemas.js';
import { timestamp } from './answer-fields.js';
import { authed, handle, SpecNames, withInput } from './handler.js';
import {
  accountAnswer,
  accountJson,
  accountSummaryAnswer,
  accountSummaryJson,
  messengerLinksAnswer,
  messengerLinksJson,
  messengerLinkStatusAnswer,
  messengerLinkStatusJson,
  transactionAnswer,
  transactionJson,
} from './mappers.js';
import { reply, routes, serve } from './route.js';

/** The cookie binding a messenger sign-in to the browser that started it. */
const MESSENGER_LOGIN_COOKIE = 'baikal_messenger_login';

const accepted = z.object({ ok: z.literal(true) });
const linkStartAnswer = z.object({ token: z.string(), bot_url: z.string(), expires_at: timestamp }).meta({ id: 'MessengerLinkStart', description: 'SPEC.md Messenger link start.' });
const signedInAnswers = { description: 'Account (signed in: the session cookie is set, and its token is in x-session-token)', json: accountAnswer };

/** SPEC.md 4.1, the account slice (and docs/cabinet.md "Identity"). */
export const AUTH_ROUTES = routes('/auth', 'account', {
  register: { method: 'post', at: '/register', summary: 'Register (and sign in)', access: 'public', body: new SpecNames(registerInput), answers: { 201: signedInAnswers } },
  login: { method: 'post', at: '/login', summary: 'Sign in with username or e-mail and password', access: 'public', body: new SpecNames(loginInput), answers: { 200: signedInAnswers } },
  me: { method: 'get', at: '/me', summary: 'The signed-in account', access: 'session', answers: { 200: { description: 'Account', json: accountAnswer } } },
  logout: { method: 'post', at: '/logout', summary: 'Sign out (ends this session)', access: 'session', answers: { 204: { description: 'Signed out' } } },
  summary: { method: 'get', at: '/summary', summary: 'Balance, active keys, spend and top-ups', access: 'session', answers: { 200: { description: 'Account summary', json: accountSummaryAnswer } } },
  transactions: {
    method: 'get',
    at: '/transactions',
    summary: 'The account’s ledger, newest first',
    access: 'session',
    query: new SpecNames(transactionsQuery),
    answers: { 200: { description: 'Array of Transaction', json: z.array(transactionAnswer) } },
  },
  verifyEmail: { method: 'post', at: '/verify-email', summary: 'Verify the e-mail with its code', access: 'session', body: new SpecNames(verifyEmailInput), answers: { 200: { description: 'Account', json: accountAnswer } } },
  resendVerification: {
    method: 'post',
    at: '/resend-verification',
    summary: 'Send the verification code again',
    access: 'session',
    body: new SpecNames(resendVerificationInput),
    optionalBody: true,
    answers: { 202: { description: 'Sent', json: accepted } },
  },
  startEmailLink: {
    method: 'post',
    at: '/email/link/start',
    summary: 'Add an e-mail (and password) to a messenger-only account: send a code',
    access: 'session',
    body: new SpecNames(emailLinkStartInput),
    answers: { 202: { description: 'Code sent', json: z.object({ ok: z.literal(true), expires_at: timestamp }) } },
  },
  confirmEmailLink: {
    method: 'post',
    at: '/email/link/confirm',
    summary: 'Confirm the e-mail link with its code and a password',
    access: 'session',
    body: new SpecNames(emailLinkConfirmInput),
    answers: { 200: { description: 'Linked', json: z.object({ ok: z.literal(true), email: z.string() }) } },
  },
  links: { method: 'get', at: '/links', summary: 'The account’s sign-in methods', access: 'session', answers: { 200: { description: 'Messenger link (account)', json: messengerLinksAnswer } } },
  startMessengerLink: { method: 'post', at: '/messenger/link/start', summary: 'Start linking a messenger identity', access: 'session', answers: { 200: { description: 'Messenger link start', json: linkStartAnswer } } },
  messengerLinkStatus: {
    method: 'get',
    at: '/messenger/link/status',
    summary: 'Where a messenger link stands',
    access: 'session',
    query: new SpecNames(messengerStatusQuery),
    answers: { 200: { description: 'Messenger link status', json: messengerLinkStatusAnswer } },
  },
  confirmMessengerLink: {
    method: 'post',
    at: '/messenger/link/confirm',
    summary: 'Confirm a link the bot started',
    access: 'session',
    body: new SpecNames(messengerTokenInput),
    answers: { 200: { description: 'Messenger link confirm', json: z.object({ status: z.string(), user_id: z.string() }) } },
  },
  unlinkMessenger: { method: 'delete', at: '/messenger/link', summary: 'Unlink the messenger identity', access: 'session', answers: { 204: { description: 'Unlinked' } } },
  startMessengerLogin: {
    method: 'get',
    at: '/messenger/start',
    summary: 'Start signing in with the messenger (binds the sign-in to this browser by a cookie)',
    access: 'public',
    answers: { 200: { description: 'Messenger link start', json: linkStartAnswer } },
  },
  messengerCallback: {
    method: 'get',
    at: '/messenger/callback',
    summary: 'Finish signing in with the messenger, in the browser that started it',
    access: 'public',
    query: new SpecNames(messengerTokenInput),
    answers: { 200: signedInAnswers },
  },
});

export function authRouter(): Router {
  const router = Router();
  const r = AUTH_ROUTES;

  serve(router, r.register, handle(async (ctx, req, res) => {
    const signedIn = await withInput('body', r.register.body, req.body, (input) => ctx.services.accounts.register(ctx.caller, input));
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    res.setHeader('x-session-token', signedIn.sessionToken);
    reply(res, r.register, 201, accountJson(signedIn.account));
  }));

  serve(router, r.login, handle(async (ctx, req, res) => {
    const signedIn = await withInput('body', r.login.body, req.body, (input) => ctx.services.accounts.login(ctx.caller, input));
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    res.setHeader('x-session-token', signedIn.sessionToken);
    reply(res, r.login, 200, accountJson(signedIn.account));
  }));

  serve(router, r.me, authed(async (actor, ctx, _req, res) => {
    reply(res, r.me, 200, accountJson(await ctx.services.accounts.me(actor)));
  }));

  serve(router, r.logout, authed(async (actor, ctx, _req, res) => {
    await ctx.services.accounts.logout(actor);
    ctx.sessionCookie.clear();
    res.status(204).end();
  }));

  serve(router, r.summary, authed(async (actor, ctx, _req, res) => {
    reply(res, r.summary, 200, accountSummaryJson(await ctx.services.accounts.summary(actor)));
  }));

  serve(router, r.transactions, authed(async (actor, ctx, req, res) => {
    const rows = await withInput('query', r.transactions.query, req.query, (query) => ctx.services.accounts.transactions(actor, query));
    reply(res, r.transactions, 200, rows.map(transactionJson));
  }));

  identityRoutes(router);
  messengerSignIn(router);
  return router;
}

/** docs/cabinet.md "Identity": e-mail verification and linking, messenger linking. */
function identityRoutes(router: Router): void {
  const r = AUTH_ROUTES;

  serve(router, r.verifyEmail, authed(async (actor, ctx, req, res) => {
    reply(res, r.verifyEmail, 200, accountJson(await withInput('body', r.verifyEmail.body, req.body, (input) => ctx.services.identity.verifyEmail(actor, input))));
  }));

  serve(router, r.resendVerification, authed(async (actor, ctx, req, res) => {
    reply(res, r.resendVerification, 202, await withInput('body', r.resendVerification.body, req.body ?? {}, (input) => ctx.services.identity.resendVerification(actor, input)));
  }));

  serve(router, r.startEmailLink, authed(async (actor, ctx, req, res) => {
    const started = await withInput('body', r.startEmailLink.body, req.body, (input) => ctx.services.identity.startEmailLink(actor, input));
    reply(res, r.startEmailLink, 202, { ok: started.ok, expires_at: started.expiresAt.toISOString() });
  }));

  serve(router, r.confirmEmailLink, authed(async (actor, ctx, req, res) => {
    reply(res, r.confirmEmailLink, 200, await withInput('body', r.confirmEmailLink.body, req.body, (input) => ctx.services.identity.confirmEmailLink(actor, input)));
  }));

  serve(router, r.links, authed(async (actor, ctx, _req, res) => {
    reply(res, r.links, 200, messengerLinksJson(await ctx.services.identity.links(actor)));
  }));

  serve(router, r.startMessengerLink, authed(async (actor, ctx, _req, res) => {
    const started = await ctx.services.identity.startMessengerLink(actor);
    reply(res, r.startMessengerLink, 200, { token: started.token, bot_url: started.botUrl, expires_at: started.expiresAt.toISOString() });
  }));

  serve(router, r.messengerLinkStatus, authed(async (actor, ctx, req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    reply(res, r.messengerLinkStatus, 200, messengerLinkStatusJson(await withInput('query', r.messengerLinkStatus.query, { token }, (query) => ctx.services.identity.messengerLinkStatus(actor, query))));
  }));

  serve(router, r.confirmMessengerLink, authed(async (actor, ctx, req, res) => {
    const confirmed = await withInput('body', r.confirmMessengerLink.body, req.body, (input) => ctx.services.identity.confirmMessengerLink(actor, input));
    reply(res, r.confirmMessengerLink, 200, { status: confirmed.status, user_id: confirmed.userId });
  }));

  serve(router, r.unlinkMessenger, authed(async (actor, ctx, _req, res) => {
    await ctx.services.identity.unlinkMessenger(actor);
    res.status(204).end();
  }));
}

/**
 * Signing in with the messenger (no session needed): start, the bot confirms on its webhook, the browser polls callback.
 * The sign-in is bound to the browser that started it (login CSRF: a link to the callback with someone
 * else's confirmed token must not sign a victim's browser into that account): start sets a cookie holding
 * the token, sent only by same-site requests to these paths, and the callback requires it.
 */
function messengerSignIn(router: Router): void {
  const r = AUTH_ROUTES;

  serve(router, r.startMessengerLogin, handle(async (ctx, req, res) => {
    const started = await ctx.services.identity.startMessengerLogin(ctx.caller);
    res.cookie(MESSENGER_LOGIN_COOKIE, started.token, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/auth/messenger', expires: started.expiresAt });
    reply(res, r.startMessengerLogin, 200, { token: started.token, bot_url: started.botUrl, expires_at: started.expiresAt.toISOString() });
  }));

  serve(router, r.messengerCallback, handle(async (ctx, req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    const bound = readCookie(req.headers.cookie, MESSENGER_LOGIN_COOKIE);
    // A malformed token is the service's 422; a well-formed one must be this browser's own.
    if (token && token.length >= 32 && token.length <= 256 && !(bound && constantTimeEqual(bound, token))) {
      throw new DomainError('forbidden', 'Finish signing in in the browser that started it', { reason: 'login_not_bound' });
    }
    const signedIn = await withInput('query', r.messengerCallback.query, { token }, (query) => ctx.services.accounts.signInWithMessenger(ctx.caller, query));
    res.clearCookie(MESSENGER_LOGIN_COOKIE, { path: '/auth/messenger' });
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    res.setHeader('x-session-token', signedIn.sessionToken);
    reply(res, r.messengerCallback, 200, accountJson(signedIn.account));
  }));
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
