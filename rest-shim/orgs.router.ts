import { Router, type Request } from 'express';
import { z } from 'zod';
import { createKeyInput, keyIdInput } from '../src/keys/keys.schemas.js';
import {
  createOrganizationInput,
  invitationIdInput,
  invitationTokenInput,
  inviteMemberInput,
  memberInput,
  organizationIdInput,
  updateMemberInput,
  updateOrganizationInput,
} from '../src/organizations/organizations.schemas.js';
import { DomainError } from '../src/shared/errors.js';
import { parseInput } from '../src/shared/validation.js';
import { authed, handle, SpecNames, withInput } from './handler.js';
import { createdKeyAnswer, createdKeyJson } from './mappers.js';
import {
  invitationAnswer,
  invitationJson,
  invitationPreviewAnswer,
  invitationPreviewJson,
  memberAnswer,
  memberJson,
  organizationAnswer,
  organizationJson,
  organizationKeyAnswer,
  organizationKeyJson,
} from './orgs.mappers.js';
import { reply, routes, serve } from './route.js';

const organizationPath = new SpecNames(organizationIdInput);
const memberPath = new SpecNames(memberInput);
const noContent = { 204: { description: 'Done' } };

/**
 * Organizations (issue 56), beside SPEC.md's paths. Every route but the invitation preview needs a session; any id of
 * an organization the caller does not belong to answers 404, a role without the right 403 (organization_role_required).
 * The invitation routes by token come first: `/orgs/invitations/…` is never an organization's id.
 */
export const ORG_ROUTES = routes('/orgs', 'organizations', {
  previewInvitation: { method: 'get', at: '/invitations/:token', summary: 'What an invitation link offers (no sign-in needed; 404 once used, revoked or expired)', access: 'public', params: new SpecNames(invitationTokenInput), answers: { 200: { description: 'Invitation', json: invitationPreviewAnswer } } },
  acceptInvitation: { method: 'post', at: '/invitations/:token/accept', summary: 'Join with the invitation’s role (the link works once)', access: 'session', params: new SpecNames(invitationTokenInput), answers: { 200: { description: 'The organization joined', json: organizationAnswer } } },
  list: { method: 'get', at: '/', summary: 'The organizations the account belongs to', access: 'session', answers: { 200: { description: 'Array of Organization', json: z.array(organizationAnswer) } } },
  create: { method: 'post', at: '/', summary: 'Found an organization (a verified e-mail is required)', access: 'session', body: new SpecNames(createOrganizationInput), answers: { 201: { description: 'Created', json: organizationAnswer } } },
  get: { method: 'get', at: '/:organization_id', summary: 'One organization', access: 'session', params: organizationPath, answers: { 200: { description: 'Organization', json: organizationAnswer } } },
  update: { method: 'patch', at: '/:organization_id', summary: 'Rename it or set its monthly cap (owner, admin)', access: 'session', params: organizationPath, body: new SpecNames(updateOrganizationInput.omit({ organizationId: true })), answers: { 200: { description: 'Organization', json: organizationAnswer } } },
  members: { method: 'get', at: '/:organization_id/members', summary: 'Its members and their roles', access: 'session', params: organizationPath, answers: { 200: { description: 'Array of OrganizationMember', json: z.array(memberAnswer) } } },
  updateMember: { method: 'patch', at: '/:organization_id/members/:user_id', summary: 'A member’s role or monthly cap (owner, admin)', access: 'session', params: memberPath, body: new SpecNames(updateMemberInput.omit({ organizationId: true, userId: true })), answers: { 200: { description: 'Member', json: memberAnswer } } },
  removeMember: { method: 'delete', at: '/:organization_id/members/:user_id', summary: 'Remove a member (owner, admin): their keys of it stop at once', access: 'session', params: memberPath, answers: noContent },
  leave: { method: 'post', at: '/:organization_id/leave', summary: 'Leave it (the owner transfers ownership first)', access: 'session', params: organizationPath, answers: noContent },
  transfer: { method: 'post', at: '/:organization_id/transfer', summary: 'Make another member the owner (owner only)', access: 'session', params: organizationPath, body: new SpecNames(memberInput.omit({ organizationId: true })), answers: { 200: { description: 'Organization', json: organizationAnswer } } },
  invitations: { method: 'get', at: '/:organization_id/invitations', summary: 'Its invitations (owner, admin)', access: 'session', params: organizationPath, answers: { 200: { description: 'Array of OrganizationInvitation', json: z.array(invitationAnswer) } } },
  invite: { method: 'post', at: '/:organization_id/invitations', summary: 'Invite an address by e-mail (owner, admin)', access: 'session', params: organizationPath, body: new SpecNames(inviteMemberInput.omit({ organizationId: true })), answers: { 201: { description: 'Invitation sent', json: invitationAnswer } } },
  revokeInvitation: { method: 'delete', at: '/:organization_id/invitations/:invitation_id', summary: 'Revoke an open invitation (owner, admin)', access: 'session', params: new SpecNames(invitationIdInput), answers: noContent },
  keys: { method: 'get', at: '/:organization_id/keys', summary: 'Its keys: every key for owners and admins, one’s own for the others', access: 'session', params: organizationPath, answers: { 200: { description: 'Array of OrganizationKey', json: z.array(organizationKeyAnswer) } } },
  createKey: { method: 'post', at: '/:organization_id/keys', summary: 'A key of the organization naming the caller (any member; the raw key is shown once)', access: 'session', params: organizationPath, body: new SpecNames(createKeyInput), optionalBody: true, answers: { 201: { description: 'Key created', json: createdKeyAnswer } } },
  revokeKey: { method: 'delete', at: '/:organization_id/keys/:key_id', summary: 'Revoke a key of it: owners and admins any, the others their own', access: 'session', params: new SpecNames(keyIdInput.extend(organizationIdInput.shape)), answers: noContent },
});

/** The path's ids, checked first so their issues are located under `path` (the service then sees valid ones). */
function pathOf<S extends z.ZodObject>(names: SpecNames<S>, req: Request): Promise<z.output<S>> {
  return withInput('path', names, req.params, async (raw) => parseInput(names.schema, raw));
}

/** A body beside the path's ids: an id the path names is refused in the body (never silently one or the other). */
function bodyOf(req: Request, pathFields: Record<string, string>): unknown {
  const body: unknown = req.body ?? {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const named = Object.keys(body).filter((key) => key in pathFields || Object.values(pathFields).includes(key));
  if (named.length) throw new DomainError('validation_failed', 'Request validation failed', { issues: named.map((key) => ({ loc: ['body', key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' })) });
  return body;
}

const ORG_FIELD = { organizationId: 'organization_id' };
const MEMBER_FIELDS = { organizationId: 'organization_id', userId: 'user_id' };

export function orgsRouter(): Router {
  const router = Router();
  const r = ORG_ROUTES;

  serve(router, r.previewInvitation, handle(async (ctx, req, res) => {
    reply(res, r.previewInvitation, 200, invitationPreviewJson(await withInput('path', r.previewInvitation.params, req.params, (input) => ctx.services.organizations.previewInvitation(input))));
  }));
  serve(router, r.acceptInvitation, authed(async (actor, ctx, req, res) => {
    reply(res, r.acceptInvitation, 200, organizationJson(await withInput('path', r.acceptInvitation.params, req.params, (input) => ctx.services.organizations.acceptInvitation(actor, input))));
  }));
  serve(router, r.list, authed(async (actor, ctx, _req, res) => {
    reply(res, r.list, 200, (await ctx.services.organizations.list(actor)).map(organizationJson));
  }));
  serve(router, r.create, authed(async (actor, ctx, req, res) => {
    reply(res, r.create, 201, organizationJson(await withInput('body', r.create.body, req.body ?? {}, (input) => ctx.services.organizations.create(actor, input))));
  }));
  serve(router, r.get, authed(async (actor, ctx, req, res) => {
    const { organizationId } = await pathOf(r.get.params, req);
    reply(res, r.get, 200, organizationJson(await ctx.services.organizations.get(actor, organizationId)));
  }));
  serve(router, r.update, authed(async (actor, ctx, req, res) => {
    const path = await pathOf(r.update.params, req);
    const updated = await withInput('body', r.update.body, bodyOf(req, ORG_FIELD), (input) => ctx.services.organizations.update(actor, { ...input, ...path }));
    reply(res, r.update, 200, organizationJson(updated));
  }));
  membershipRoutes(router);
  invitationRoutes(router);
  keyRoutes(router);
  return router;
}

function membershipRoutes(router: Router): void {
  const r = ORG_ROUTES;
  serve(router, r.members, authed(async (actor, ctx, req, res) => {
    const { organizationId } = await pathOf(r.members.params, req);
    reply(res, r.members, 200, (await ctx.services.organizations.members(actor, organizationId)).map(memberJson));
  }));
  serve(router, r.updateMember, authed(async (actor, ctx, req, res) => {
    const path = await pathOf(r.updateMember.params, req);
    const updated = await withInput('body', r.updateMember.body, bodyOf(req, MEMBER_FIELDS), (input) => ctx.services.organizations.updateMember(actor, { ...input, ...path }));
    reply(res, r.updateMember, 200, memberJson(updated));
  }));
  serve(router, r.removeMember, authed(async (actor, ctx, req, res) => {
    await ctx.services.organizations.removeMember(actor, await pathOf(r.removeMember.params, req));
    res.status(204).end();
  }));
  serve(router, r.leave, authed(async (actor, ctx, req, res) => {
    const { organizationId } = await pathOf(r.leave.params, req);
    await ctx.services.organizations.leave(actor, organizationId);
    res.status(204).end();
  }));
  serve(router, r.transfer, authed(async (actor, ctx, req, res) => {
    const path = await pathOf(r.transfer.params, req);
    const organization = await withInput('body', r.transfer.body, bodyOf(req, ORG_FIELD), (input) => ctx.services.organizations.transferOwnership(actor, { ...input, ...path }));
    reply(res, r.transfer, 200, organizationJson(organization));
  }));
}

function invitationRoutes(router: Router): void {
  const r = ORG_ROUTES;
  serve(router, r.invitations, authed(async (actor, ctx, req, res) => {
    const { organizationId } = await pathOf(r.invitations.params, req);
    reply(res, r.invitations, 200, (await ctx.services.organizations.invitations(actor, organizationId)).map(invitationJson));
  }));
  serve(router, r.invite, authed(async (actor, ctx, req, res) => {
    const path = await pathOf(r.invite.params, req);
    // The link in the e-mail: PUBLIC_URL when set (the service prefers it), else the origin this request came to.
    const invitation = await withInput('body', r.invite.body, bodyOf(req, ORG_FIELD), (input) => ctx.services.organizations.invite(actor, { ...input, ...path }, ctx.caller.origin ?? undefined));
    reply(res, r.invite, 201, invitationJson(invitation));
  }));
  serve(router, r.revokeInvitation, authed(async (actor, ctx, req, res) => {
    await ctx.services.organizations.revokeInvitation(actor, await pathOf(r.revokeInvitation.params, req));
    res.status(204).end();
  }));
}

function keyRoutes(router: Router): void {
  const r = ORG_ROUTES;
  serve(router, r.keys, authed(async (actor, ctx, req, res) => {
    const { organizationId } = await pathOf(r.keys.params, req);
    reply(res, r.keys, 200, (await ctx.services.organizations.keys(actor, organizationId)).map(organizationKeyJson));
  }));
  serve(router, r.createKey, authed(async (actor, ctx, req, res) => {
    const { organizationId } = await pathOf(r.createKey.params, req);
    const created = await withInput('body', r.createKey.body, req.body ?? {}, (input) => ctx.services.organizations.createKey(actor, organizationId, input));
    reply(res, r.createKey, 201, createdKeyJson(created));
  }));
  serve(router, r.revokeKey, authed(async (actor, ctx, req, res) => {
    const { organizationId, keyId } = await pathOf(r.revokeKey.params, req);
    await ctx.services.organizations.revokeKey(actor, organizationId, keyId);
    res.status(204).end();
  }));
}
