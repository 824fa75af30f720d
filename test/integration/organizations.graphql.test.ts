import { describe, expect, it } from 'vitest';
import {
  AcceptInvitationDocument,
  CreateOrganizationDocument,
  CreateOrganizationKeyDocument,
  InvitationPreviewDocument,
  InviteMemberDocument,
  LeaveOrganizationDocument,
  OrganizationDocument,
  OrganizationInvitationsDocument,
  OrganizationKeysDocument,
  OrganizationMembersDocument,
  OrganizationsDocument,
  RemoveMemberDocument,
  RevokeInvitationDocument,
  TransferOwnershipDocument,
  UpdateMemberDocument,
  UpdateOrganizationDocument,
} from '../graphql/generated.js';
import { graphql, http, registerRest, type GraphQLResult } from '../helpers/clients.js';
import { sleep, useIdentityGateway } from '../helpers/identity.js';
import { verifiedAccount, type Account } from '../helpers/organizations.js';

/**
 * Issue 56, the membership flows through GraphQL: found an organization (verified e-mail), invite by e-mail (the
 * message arrives over SMTP with a single-use link to the request's own origin), preview and accept it, change
 * roles and caps, remove a member (their organization key stops on /v1 at once), leave, transfer ownership.
 */
const { gw, mailsTo } = useIdentityGateway();

function data<R>(result: GraphQLResult<R>): R {
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!;
}
const codeOf = (result: GraphQLResult<unknown>) => result.errors?.[0]?.extensions?.code;

/** The invitation link in the newest message to `email`, as the SMTP server received it (quoted-printable undone). */
async function mailedLink(email: string, count: number): Promise<{ link: string; token: string }> {
  for (let attempt = 0; attempt < 200 && mailsTo(email).length < count; attempt += 1) await sleep(25);
  const raw = mailsTo(email)[count - 1]?.raw;
  if (!raw) throw new Error(`no message #${count} to ${email}`);
  const text = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const match = /(\S+\/app\/invite\?token=([^\s&]+))/.exec(text);
  if (!match) throw new Error(`no invitation link in ${text}`);
  return { link: match[1]!, token: decodeURIComponent(match[2]!) };
}

async function newOrganization(owner: Account, name = 'Acme') {
  return data(await graphql(gw.url, CreateOrganizationDocument, { input: { name } }, owner.token)).createOrganization;
}

/** Invites `invitee` with `role`, returns the invitation and the mailed token. */
async function invite(organizationId: string, inviter: Account, invitee: Account, role: 'ADMIN' | 'BILLING' | 'MEMBER' = 'MEMBER') {
  const before = mailsTo(invitee.email).length;
  const invitation = data(await graphql(gw.url, InviteMemberDocument, { input: { organizationId, email: invitee.email, role, language: 'en' } }, inviter.token)).inviteMember;
  return { invitation, ...(await mailedLink(invitee.email, before + 1)) };
}

async function join(organizationId: string, inviter: Account, role: 'ADMIN' | 'BILLING' | 'MEMBER' = 'MEMBER'): Promise<Account> {
  const invitee = await verifiedAccount(gw);
  const { token } = await invite(organizationId, inviter, invitee, role);
  data(await graphql(gw.url, AcceptInvitationDocument, { token }, invitee.token));
  return invitee;
}

describe('founding an organization', () => {
  it('needs a verified e-mail; the founder is its owner and it is listed', async () => {
    const unverified = await registerRest(gw.url);
    const refused = await graphql(gw.url, CreateOrganizationDocument, { input: { name: 'Nope' } }, unverified.token);
    expect(codeOf(refused)).toBe('FORBIDDEN');
    expect(refused.errors![0]!.extensions!.reason).toBe('email_not_verified');
    const owner = await verifiedAccount(gw);
    const organization = await newOrganization(owner, 'Acme Labs');
    expect(organization).toMatchObject({ name: 'Acme Labs', role: 'OWNER', ownerId: owner.userId, monthlySpendCap: null, myMonthlySpendCap: null });
    expect(data(await graphql(gw.url, OrganizationsDocument, {}, owner.token)).organizations.map((o) => o.id)).toEqual([organization.id]);
    expect(codeOf(await graphql(gw.url, CreateOrganizationDocument, { input: { name: ' ' } }, owner.token))).toBe('BAD_USER_INPUT');
  });
});

describe('invitations', () => {
  it('mails a link to the request’s origin; preview needs no sign-in; accept works once', async () => {
    const owner = await verifiedAccount(gw);
    const organization = await newOrganization(owner, 'Invite Co');
    const invitee = await verifiedAccount(gw);
    const { invitation, link, token } = await invite(organization.id, owner, invitee, 'BILLING');
    expect(invitation).toMatchObject({ email: invitee.email, role: 'BILLING', status: 'open' });
    expect(link.startsWith(`${gw.url}/app/invite?token=`)).toBe(true);
    const preview = data(await graphql(gw.url, InvitationPreviewDocument, { token })).invitationPreview;
    expect(preview).toMatchObject({ organizationName: 'Invite Co', email: invitee.email, role: 'BILLING' });
    const joined = data(await graphql(gw.url, AcceptInvitationDocument, { token }, invitee.token)).acceptInvitation;
    expect(joined).toMatchObject({ id: organization.id, role: 'BILLING' });
    // Single use: the link is gone for everyone, the invitee included.
    const again = await graphql(gw.url, AcceptInvitationDocument, { token }, invitee.token);
    expect(codeOf(again)).toBe('NOT_FOUND');
    expect(codeOf(await graphql(gw.url, AcceptInvitationDocument, { token }, (await verifiedAccount(gw)).token))).toBe('NOT_FOUND');
    expect(codeOf(await graphql(gw.url, InvitationPreviewDocument, { token }))).toBe('NOT_FOUND');
    const listed = data(await graphql(gw.url, OrganizationInvitationsDocument, { organizationId: organization.id }, owner.token)).organizationInvitations;
    expect(listed.find((i) => i.id === invitation.id)?.status).toBe('accepted');
  });

  it('an expired or revoked link is not found; accepting needs a session', async () => {
    const owner = await verifiedAccount(gw);
    const organization = await newOrganization(owner);
    const late = await verifiedAccount(gw);
    const expired = await invite(organization.id, owner, late);
    expect(codeOf(await graphql(gw.url, AcceptInvitationDocument, { token: expired.token }))).toBe('UNAUTHENTICATED');
    await gw.db.query("update organization_invitations set expires_at = now() - interval '1 second' where id = $1", [expired.invitation.id]);
    expect(codeOf(await graphql(gw.url, InvitationPreviewDocument, { token: expired.token }))).toBe('NOT_FOUND');
    expect(codeOf(await graphql(gw.url, AcceptInvitationDocument, { token: expired.token }, late.token))).toBe('NOT_FOUND');
    const revoked = await invite(organization.id, owner, await verifiedAccount(gw));
    expect(data(await graphql(gw.url, RevokeInvitationDocument, { organizationId: organization.id, invitationId: revoked.invitation.id }, owner.token)).revokeInvitation).toBe(true);
    expect(codeOf(await graphql(gw.url, InvitationPreviewDocument, { token: revoked.token }))).toBe('NOT_FOUND');
    const statuses = data(await graphql(gw.url, OrganizationInvitationsDocument, { organizationId: organization.id }, owner.token)).organizationInvitations;
    expect(Object.fromEntries(statuses.map((i) => [i.id, i.status]))).toEqual({ [expired.invitation.id]: 'expired', [revoked.invitation.id]: 'revoked' });
    expect(data(await graphql(gw.url, OrganizationDocument, { id: organization.id }, owner.token)).organization.id).toBe(organization.id);
    expect(codeOf(await graphql(gw.url, OrganizationDocument, { id: organization.id }, late.token))).toBe('NOT_FOUND');
  });
});

describe('roles and caps', () => {
  it('owners and admins change roles and caps; a plain member sees only names and roles of the others', async () => {
    const owner = await verifiedAccount(gw);
    const organization = await newOrganization(owner);
    const admin = await join(organization.id, owner, 'ADMIN');
    const member = await join(organization.id, admin, 'MEMBER');
    const promoted = data(await graphql(gw.url, UpdateMemberDocument, { input: { organizationId: organization.id, userId: member.userId, role: 'BILLING' } }, admin.token)).updateMember;
    expect(promoted).toMatchObject({ userId: member.userId, role: 'BILLING' });
    const capped = data(await graphql(gw.url, UpdateMemberDocument, { input: { organizationId: organization.id, userId: member.userId, role: 'MEMBER', monthlySpendCap: '5' } }, owner.token)).updateMember;
    expect(capped).toMatchObject({ role: 'MEMBER', monthlySpendCap: '5', monthSpent: '0' });
    expect(data(await graphql(gw.url, OrganizationDocument, { id: organization.id }, member.token)).organization).toMatchObject({ role: 'MEMBER', myMonthlySpendCap: '5' });
    const orgCap = data(await graphql(gw.url, UpdateOrganizationDocument, { input: { organizationId: organization.id, monthlySpendCap: '100', name: 'Renamed' } }, admin.token)).updateOrganization;
    expect(orgCap).toMatchObject({ name: 'Renamed', monthlySpendCap: '100', role: 'ADMIN' });
    const cleared = data(await graphql(gw.url, UpdateOrganizationDocument, { input: { organizationId: organization.id, monthlySpendCap: null } }, owner.token)).updateOrganization;
    expect(cleared).toMatchObject({ name: 'Renamed', monthlySpendCap: null });
    // What each sees of the others.
    const seenByMember = data(await graphql(gw.url, OrganizationMembersDocument, { organizationId: organization.id }, member.token)).organizationMembers;
    expect(seenByMember.map((m) => m.role)).toEqual(['OWNER', 'ADMIN', 'MEMBER']);
    expect(seenByMember.find((m) => m.userId === owner.userId)).toMatchObject({ email: null, monthlySpendCap: null, monthSpent: null });
    expect(seenByMember.find((m) => m.userId === member.userId)).toMatchObject({ email: member.email, monthlySpendCap: '5' });
    const seenByAdmin = data(await graphql(gw.url, OrganizationMembersDocument, { organizationId: organization.id }, admin.token)).organizationMembers;
    expect(seenByAdmin.find((m) => m.userId === owner.userId)?.email).toBe(owner.email);
    // Refusals: a member changes nothing, nobody makes an owner by a role change, the owner's role stays.
    expect(codeOf(await graphql(gw.url, UpdateMemberDocument, { input: { organizationId: organization.id, userId: admin.userId, role: 'MEMBER' } }, member.token))).toBe('FORBIDDEN');
    expect(codeOf(await graphql(gw.url, UpdateMemberDocument, { input: { organizationId: organization.id, userId: member.userId, role: 'OWNER' } }, owner.token))).toBe('BAD_USER_INPUT');
    expect(codeOf(await graphql(gw.url, UpdateMemberDocument, { input: { organizationId: organization.id, userId: owner.userId, role: 'ADMIN' } }, admin.token))).toBe('CONFLICT');
    expect(codeOf(await graphql(gw.url, UpdateMemberDocument, { input: { organizationId: organization.id, userId: member.userId, monthlySpendCap: '-1' } }, owner.token))).toBe('BAD_USER_INPUT');
  });
});

describe('removing, leaving and transferring', () => {
  it('a removed member’s organization key stops authenticating /v1 at once', async () => {
    const owner = await verifiedAccount(gw);
    const organization = await newOrganization(owner);
    const member = await join(organization.id, owner);
    const key = data(await graphql(gw.url, CreateOrganizationKeyDocument, { organizationId: organization.id, input: { label: 'ci' } }, member.token)).createOrganizationKey;
    const keys = data(await graphql(gw.url, OrganizationKeysDocument, { organizationId: organization.id }, owner.token)).organizationKeys;
    expect(keys).toEqual([expect.objectContaining({ id: key.id, label: 'ci', createdBy: member.userId })]);
    expect((await http(gw.url, 'GET', '/v1/me', { token: key.key })).status).toBe(200);
    expect(data(await graphql(gw.url, RemoveMemberDocument, { organizationId: organization.id, userId: member.userId }, owner.token)).removeMember).toBe(true);
    const after = await http(gw.url, 'GET', '/v1/me', { token: key.key });
    expect(after.status, after.text).toBe(401);
    expect(data(await graphql(gw.url, OrganizationKeysDocument, { organizationId: organization.id }, owner.token)).organizationKeys).toEqual([]);
    expect(codeOf(await graphql(gw.url, OrganizationDocument, { id: organization.id }, member.token))).toBe('NOT_FOUND');
    expect(codeOf(await graphql(gw.url, RemoveMemberDocument, { organizationId: organization.id, userId: owner.userId }, owner.token))).toBe('NOT_FOUND');
  });

  it('a member leaves (their key stops too); the owner leaves only after transferring ownership', async () => {
    const owner = await verifiedAccount(gw);
    const organization = await newOrganization(owner);
    const admin = await join(organization.id, owner, 'ADMIN');
    const member = await join(organization.id, owner);
    const key = data(await graphql(gw.url, CreateOrganizationKeyDocument, { organizationId: organization.id }, member.token)).createOrganizationKey;
    expect(data(await graphql(gw.url, LeaveOrganizationDocument, { organizationId: organization.id }, member.token)).leaveOrganization).toBe(true);
    expect((await http(gw.url, 'GET', '/v1/me', { token: key.key })).status).toBe(401);
    expect(data(await graphql(gw.url, OrganizationsDocument, {}, member.token)).organizations).toEqual([]);
    const ownerLeaves = await graphql(gw.url, LeaveOrganizationDocument, { organizationId: organization.id }, owner.token);
    expect(codeOf(ownerLeaves)).toBe('CONFLICT');
    expect(codeOf(await graphql(gw.url, TransferOwnershipDocument, { organizationId: organization.id, userId: owner.userId }, admin.token))).toBe('FORBIDDEN');
    const transferred = data(await graphql(gw.url, TransferOwnershipDocument, { organizationId: organization.id, userId: admin.userId }, owner.token)).transferOwnership;
    expect(transferred).toMatchObject({ id: organization.id, role: 'ADMIN', ownerId: admin.userId });
    expect(data(await graphql(gw.url, OrganizationDocument, { id: organization.id }, admin.token)).organization).toMatchObject({ role: 'OWNER', ownerId: admin.userId });
    expect(data(await graphql(gw.url, LeaveOrganizationDocument, { organizationId: organization.id }, owner.token)).leaveOrganization).toBe(true);
    const remaining = data(await graphql(gw.url, OrganizationMembersDocument, { organizationId: organization.id }, admin.token)).organizationMembers;
    expect(remaining.map((m) => [m.userId, m.role])).toEqual([[admin.userId, 'OWNER']]);
  });
});
