import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { TRPCClientError } from '@trpc/client';
import { invitationAnswer, invitationPreviewAnswer, memberAnswer, organizationAnswer, organizationKeyAnswer } from '../../rest-shim/orgs.mappers.js';
import { createdKeyAnswer } from '../../rest-shim/mappers.js';
import { http, trpcClient } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';
import { organizationWithRoles, outboxInvitation, verifiedAccount } from '../helpers/organizations.js';

/**
 * Issue 56, the /orgs routes of the REST shim: SPEC.md's shapes (snake_case, exactly the declared fields), 422
 * `detail: [{loc, msg, type}]` located in the path or the body, and the invitation link at the request's origin;
 * and a smoke test of the tRPC router over the same service.
 */
const gw = useTestGateway();

/** A body is exactly an answer schema: every key it names, no other, each of its type. */
function expectAnswer(schema: z.ZodObject, body: unknown) {
  expect(Object.keys(body as object).sort()).toEqual(Object.keys(schema.shape).sort());
  expect(schema.safeParse(body).error).toBeUndefined();
}

function expectIssues(response: { status: number; body: any; text: string }, locs: (string | number)[][]) {
  expect(response.status, response.text).toBe(422);
  for (const issue of response.body.detail) expect(Object.keys(issue).sort()).toEqual(['loc', 'msg', 'type']);
  expect(response.body.detail.map((issue: { loc: unknown }) => issue.loc)).toEqual(locs);
}

describe('/orgs shapes', () => {
  it('answers each route in its declared shape', async () => {
    const { id, members } = await organizationWithRoles(gw, 'Shapes');
    const { owner, member } = members;
    const list = await http(gw.url, 'GET', '/orgs', { token: owner.token });
    expect(list.status).toBe(200);
    expectAnswer(organizationAnswer, list.body[0]);
    const patched = await http(gw.url, 'PATCH', `/orgs/${id}`, { token: owner.token, body: { name: 'Shapes Ltd', monthly_spend_cap: '250.5' } });
    expect(patched.status, patched.text).toBe(200);
    expectAnswer(organizationAnswer, patched.body);
    expect(patched.body).toMatchObject({ id, name: 'Shapes Ltd', role: 'owner', owner_id: owner.userId, monthly_spend_cap: '250.5', my_monthly_spend_cap: null });
    const roster = await http(gw.url, 'GET', `/orgs/${id}/members`, { token: owner.token });
    for (const row of roster.body) expectAnswer(memberAnswer, row);
    const updated = await http(gw.url, 'PATCH', `/orgs/${id}/members/${member.userId}`, { token: owner.token, body: { monthly_spend_cap: '10' } });
    expect(updated.body).toMatchObject({ user_id: member.userId, role: 'member', monthly_spend_cap: '10', month_spent: '0' });
    const created = await http(gw.url, 'POST', `/orgs/${id}/keys`, { token: member.token, body: { label: 'rest' } });
    expect(created.status).toBe(201);
    expectAnswer(createdKeyAnswer, created.body);
    const keys = await http(gw.url, 'GET', `/orgs/${id}/keys`, { token: member.token });
    expect(keys.body).toHaveLength(1);
    expectAnswer(organizationKeyAnswer, keys.body[0]);
    expect(keys.body[0]).toMatchObject({ id: created.body.id, created_by: member.userId });
    expect((await http(gw.url, 'DELETE', `/orgs/${id}/keys/${created.body.id}`, { token: member.token })).status).toBe(204);
  });

  it('invites with a link to the request’s own origin; preview and accept by token', async () => {
    const { id, members } = await organizationWithRoles(gw, 'Invites');
    const invitee = await verifiedAccount(gw);
    const sent = await http(gw.url, 'POST', `/orgs/${id}/invitations`, { token: members.admin.token, body: { email: invitee.email, role: 'billing', language: 'ru' } });
    expect(sent.status, sent.text).toBe(201);
    expectAnswer(invitationAnswer, sent.body);
    expect(sent.body).toMatchObject({ email: invitee.email, role: 'billing', status: 'open' });
    const { link, token } = await outboxInvitation(gw, invitee.email);
    expect(link.startsWith(`${gw.url}/app/invite?token=`)).toBe(true);
    const listed = await http(gw.url, 'GET', `/orgs/${id}/invitations`, { token: members.owner.token });
    expectAnswer(invitationAnswer, listed.body[0]);
    const preview = await http(gw.url, 'GET', `/orgs/invitations/${encodeURIComponent(token)}`);
    expect(preview.status).toBe(200);
    expectAnswer(invitationPreviewAnswer, preview.body);
    expect(preview.body).toMatchObject({ organization_name: 'Invites', email: invitee.email, role: 'billing' });
    const accepted = await http(gw.url, 'POST', `/orgs/invitations/${encodeURIComponent(token)}/accept`, { token: invitee.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id, role: 'billing' });
    const again = await http(gw.url, 'POST', `/orgs/invitations/${encodeURIComponent(token)}/accept`, { token: invitee.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ detail: expect.any(String), code: 'invitation_invalid' });
  });

  it('leave and transfer answer 204 and the organization; a role without the right is 403 organization_role_required', async () => {
    const { id, members } = await organizationWithRoles(gw, 'Moves');
    const refused = await http(gw.url, 'GET', `/orgs/${id}/invitations`, { token: members.member.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ detail: expect.any(String), code: 'organization_role_required' });
    expect((await http(gw.url, 'POST', `/orgs/${id}/leave`, { token: members.billing.token })).status).toBe(204);
    const moved = await http(gw.url, 'POST', `/orgs/${id}/transfer`, { token: members.owner.token, body: { user_id: members.admin.userId } });
    expect(moved.status, moved.text).toBe(200);
    expectAnswer(organizationAnswer, moved.body);
    expect(moved.body).toMatchObject({ role: 'admin', owner_id: members.admin.userId });
    expect((await http(gw.url, 'DELETE', `/orgs/${id}/members/${members.member.userId}`, { token: members.admin.token })).status).toBe(204);
  });
});

describe('/orgs validation: 422 located in the path or the body, under SPEC names', () => {
  it('refuses bad ids, bad bodies, domain (camelCase) names and ids the path already names', async () => {
    const { id, members } = await organizationWithRoles(gw, 'Checks');
    const token = members.owner.token;
    expectIssues(await http(gw.url, 'GET', '/orgs/not-a-uuid', { token }), [['path', 'organization_id']]);
    expectIssues(await http(gw.url, 'DELETE', `/orgs/${id}/members/nope`, { token }), [['path', 'user_id']]);
    expectIssues(await http(gw.url, 'POST', '/orgs', { token, body: {} }), [['body', 'name']]);
    expectIssues(await http(gw.url, 'POST', '/orgs', { token, body: { name: 'x'.repeat(101) } }), [['body', 'name']]);
    expectIssues(await http(gw.url, 'PATCH', `/orgs/${id}`, { token, body: { monthly_spend_cap: '-1' } }), [['body', 'monthly_spend_cap']]);
    expectIssues(await http(gw.url, 'PATCH', `/orgs/${id}`, { token, body: { monthlySpendCap: '1' } }), [['body', 'monthlySpendCap']]);
    expectIssues(await http(gw.url, 'PATCH', `/orgs/${id}`, { token, body: { organization_id: id, name: 'x' } }), [['body', 'organization_id']]);
    expectIssues(await http(gw.url, 'POST', `/orgs/${id}/invitations`, { token, body: { email: 'nope', role: 'owner' } }), [['body', 'email'], ['body', 'role']]);
    expectIssues(await http(gw.url, 'PATCH', `/orgs/${id}/members/${members.member.userId}`, { token, body: { role: 'owner' } }), [['body', 'role']]);
    expectIssues(await http(gw.url, 'POST', `/orgs/${id}/transfer`, { token, body: {} }), [['body', 'user_id']]);
    expectIssues(await http(gw.url, 'POST', `/orgs/${id}/keys`, { token, body: { label: 'x'.repeat(129) } }), [['body', 'label']]);
    expectIssues(await http(gw.url, 'GET', '/orgs/invitations/short'), [['path', 'token']]);
    const beforeCount = await gw.db.query<{ n: number }>('select count(*)::int as n from organizations');
    expectIssues(await http(gw.url, 'POST', '/orgs', { token, body: { name: 'ok', extra: 1 } }), [['body', 'extra']]);
    expect(await gw.db.query('select count(*)::int as n from organizations')).toEqual(beforeCount);
  });
});

describe('tRPC organizations', () => {
  it('lists, creates, invites, previews and refuses as the other surfaces do', async () => {
    const owner = await verifiedAccount(gw);
    const client = trpcClient(gw.url, owner.token);
    const organization = await client.organizations.create.mutate({ name: 'Over tRPC' });
    expect(organization).toMatchObject({ name: 'Over tRPC', role: 'owner', ownerId: owner.userId });
    expect((await client.organizations.list.query()).map((o) => o.id)).toEqual([organization.id]);
    const invitee = await verifiedAccount(gw);
    await client.organizations.invite.mutate({ organizationId: organization.id, email: invitee.email });
    const { token, link } = await outboxInvitation(gw, invitee.email);
    expect(link.startsWith(`${gw.url}/app/invite`)).toBe(true);
    expect(await trpcClient(gw.url).organizations.previewInvitation.query({ token })).toMatchObject({ organizationName: 'Over tRPC', role: 'member' });
    const joined = await trpcClient(gw.url, invitee.token).organizations.acceptInvitation.mutate({ token });
    expect(joined.role).toBe('member');
    const key = await trpcClient(gw.url, invitee.token).organizations.createKey.mutate({ organizationId: organization.id, label: 'trpc' });
    expect((await client.organizations.keys.query({ organizationId: organization.id })).map((k) => [k.id, k.createdBy])).toEqual([[key.id, invitee.userId]]);
    const outsider = trpcClient(gw.url, (await verifiedAccount(gw)).token);
    const notFound = await outsider.organizations.members.query({ organizationId: organization.id }).catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(TRPCClientError);
    expect((notFound as TRPCClientError<any>).data).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    const invalid = await client.organizations.update.mutate({ organizationId: organization.id, monthlySpendCap: '-5' }).catch((error: unknown) => error);
    expect((invalid as TRPCClientError<any>).data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', issues: [{ loc: ['monthlySpendCap'], msg: expect.any(String), type: expect.any(String) }] });
    expect(await client.organizations.removeMember.mutate({ organizationId: organization.id, userId: invitee.userId })).toEqual({ ok: true });
  });
});
