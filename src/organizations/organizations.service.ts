import type { MikroORM } from '@mikro-orm/postgresql';
import type { CreatedKeyView, KeysService, KeyView } from '../keys/keys.service.js';
import type { CreateKeyInput } from '../keys/keys.schemas.js';
import type { Mailer } from '../mail/mailer.js';
import { templates, type MailLanguage } from '../mail/templates.js';
import type { Actor } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { randomSecret, sha256Hex } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { formatUsd } from '../shared/money.js';
import { parseInput } from '../shared/validation.js';
import { OrganizationsRepository, type InvitationRow, type MemberRow, type MembershipRow } from './organizations.repository.js';
import {
  createOrganizationInput,
  invitationIdInput,
  invitationTokenInput,
  inviteMemberInput,
  memberInput,
  organizationIdInput,
  updateMemberInput,
  updateOrganizationInput,
  type CreateOrganizationInput,
  type InviteMemberInput,
  type UpdateMemberInput,
  type UpdateOrganizationInput,
} from './organizations.schemas.js';
import { may, requireRole, type Capability, type Role } from './roles.js';

/** What organizations take from the operator's configuration. */
export interface OrganizationsSettings {
  brandName: string;
  /** The cabinet's public address for invitation links (PUBLIC_URL); unset: the address the inviter's request came to. */
  publicUrl: string | null;
  invitationTtlMs: number;
  /** The invitation e-mail's language when the inviter names none. */
  language: MailLanguage;
}

export interface OrganizationView {
  id: string;
  name: string;
  /** The caller's role in it. */
  role: Role;
  ownerId: string;
  /** The organization's spend per UTC month across every key; null: none. */
  monthlySpendCap: string | null;
  /** The caller's own cap as a member; null: none. */
  myMonthlySpendCap: string | null;
  createdAt: Date;
}

export interface MemberView {
  userId: string;
  /** The member's username, or the e-mail when none is set. */
  name: string;
  email: string | null;
  role: Role;
  /** Null for a plain member looking at someone else (caps and spend are the managers' and billing's to see). */
  monthlySpendCap: string | null;
  monthSpent: string | null;
  joinedAt: Date;
}

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  status: 'open' | 'accepted' | 'revoked' | 'expired';
  createdAt: Date;
  expiresAt: Date;
}

/** What the invitee sees before accepting (anyone with the link). */
export interface InvitationPreview {
  organizationName: string;
  email: string;
  role: Role;
  expiresAt: Date;
}

/** The caller's standing in an organization, as every organization-scoped service checks it. */
export interface OrganizationAccess {
  organizationId: string;
  name: string;
  userId: string;
  role: Role;
  may(capability: Capability): boolean;
}

/** Organizations one account may own. */
export const MAX_OWNED_ORGANIZATIONS = 20;

/**
 * Organizations (issue 56): a team with a wallet. The organization is a ledger owner like an account (its `users`
 * row holds the balance), so billing, holds and the shared wallets treat it as one; this service keeps who belongs,
 * with which role, and what each role may do. Every operation checks the caller's membership on the server: an
 * outsider gets not-found for any organization id (ids cannot be probed), a member whose role does not allow an
 * operation gets 403.
 */
export class OrganizationsService {
  private readonly organizations: OrganizationsRepository;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      keys: KeysService;
      mailer: Pick<Mailer, 'send'>;
      identity: { requireVerifiedEmail(userId: string): Promise<void> };
      settings: OrganizationsSettings;
      log: Logger;
    },
  ) {
    this.organizations = new OrganizationsRepository(deps.orm);
  }

  /** The caller's membership, or not-found; with a capability, 403 when the role lacks it. */
  async access(actor: Actor, organizationId: string, capability?: Capability): Promise<OrganizationAccess> {
    const membership = await this.membershipOf(actor, organizationId);
    if (capability) requireRole(membership.role, capability);
    return { organizationId: membership.id, name: membership.name, userId: actor.userId, role: membership.role, may: (c) => may(membership.role, c) };
  }

  private async membershipOf(actor: Actor, organizationId: string): Promise<MembershipRow> {
    const { organizationId: id } = parseInput(organizationIdInput, { organizationId });
    const membership = await this.organizations.membership(id, actor.userId);
    if (!membership) throw new DomainError('not_found', 'No such organization');
    return membership;
  }

  /** Any account with a verified e-mail may found organizations (up to MAX_OWNED_ORGANIZATIONS). */
  async create(actor: Actor, raw: CreateOrganizationInput): Promise<OrganizationView> {
    const input = parseInput(createOrganizationInput, raw ?? {});
    await this.deps.identity.requireVerifiedEmail(actor.userId);
    const row = await this.organizations.create(actor.userId, input.name, MAX_OWNED_ORGANIZATIONS);
    if (!row) throw new DomainError('conflict', `An account may own at most ${MAX_OWNED_ORGANIZATIONS} organizations`, { reason: 'too_many_organizations' });
    this.deps.log.info({ organizationId: row.id, userId: actor.userId }, 'organization created');
    return toView({ ...row, role: 'owner', member_cap_usd: null });
  }

  async list(actor: Actor): Promise<OrganizationView[]> {
    return (await this.organizations.ofMember(actor.userId)).map(toView);
  }

  async get(actor: Actor, organizationId: string): Promise<OrganizationView> {
    return toView(await this.membershipOf(actor, organizationId));
  }

  /** Renames, or sets the organization's monthly cap (owner, admin); a cap change reaches every process's cached keys. */
  async update(actor: Actor, raw: UpdateOrganizationInput): Promise<OrganizationView> {
    const input = parseInput(updateOrganizationInput, raw ?? {});
    const access = await this.access(actor, input.organizationId, 'manageMembers');
    const row = await this.organizations.update(input.organizationId, { name: input.name, monthlySpendCap: input.monthlySpendCap });
    if (!row) throw new DomainError('not_found', 'No such organization');
    if (input.monthlySpendCap !== undefined) await this.deps.keys.evictEverywhere(await this.deps.keys.activeKeyIds(input.organizationId));
    return toView({ ...row, role: access.role, member_cap_usd: (await this.membershipOf(actor, input.organizationId)).member_cap_usd });
  }

  async members(actor: Actor, organizationId: string): Promise<MemberView[]> {
    const access = await this.access(actor, organizationId);
    const seesAll = access.may('viewAllUsage') || access.may('manageMembers');
    return (await this.organizations.members(access.organizationId)).map((row) => toMemberView(row, seesAll || row.user_id === actor.userId));
  }

  /** Invites an address (owner, admin): a single-use link that expires, sent by e-mail. */
  async invite(actor: Actor, raw: InviteMemberInput, requestOrigin?: string): Promise<InvitationView> {
    const input = parseInput(inviteMemberInput, raw ?? {});
    const access = await this.access(actor, input.organizationId, 'manageMembers');
    if (await this.organizations.isMemberByEmail(access.organizationId, input.email)) {
      throw new DomainError('conflict', 'That address already belongs to a member', { reason: 'already_member' });
    }
    const base = this.deps.settings.publicUrl ?? requestOrigin;
    if (!base) throw new DomainError('unavailable', 'Invitation links need PUBLIC_URL set on the gateway', { reason: 'public_url_unset' });
    const token = randomSecret(32);
    const expiresAt = new Date(Date.now() + this.deps.settings.invitationTtlMs);
    const row = await this.organizations.invite({ organizationId: access.organizationId, email: input.email, role: input.role, tokenHash: sha256Hex(token), invitedBy: actor.userId, expiresAt });
    const inviter = await this.organizations.member(access.organizationId, actor.userId);
    const link = `${base.replace(/\/+$/, '')}/app/invite?token=${encodeURIComponent(token)}`;
    const mail = templates.organizationInvitation(input.language ?? this.deps.settings.language, {
      brand: this.deps.settings.brandName,
      organization: access.name,
      inviter: inviter?.username ?? inviter?.email ?? this.deps.settings.brandName,
      role: input.role,
      link,
      days: Math.round((this.deps.settings.invitationTtlMs / 86_400_000) * 100) / 100,
    });
    await this.deps.mailer.send({ to: input.email, ...mail });
    this.deps.log.info({ organizationId: access.organizationId, invitationId: row.id, role: input.role }, 'organization invitation sent');
    return toInvitationView(row);
  }

  async invitations(actor: Actor, organizationId: string): Promise<InvitationView[]> {
    const access = await this.access(actor, organizationId, 'manageMembers');
    return (await this.organizations.invitations(access.organizationId)).map(toInvitationView);
  }

  async revokeInvitation(actor: Actor, raw: { organizationId: string; invitationId: string }): Promise<void> {
    const input = parseInput(invitationIdInput, raw ?? {});
    await this.access(actor, input.organizationId, 'manageMembers');
    if (!(await this.organizations.revokeInvitation(input.organizationId, input.invitationId))) throw new DomainError('not_found', 'No such open invitation');
  }

  /** What an invitation link offers (no sign-in needed: the link is the secret); not-found once used, revoked or expired. */
  async previewInvitation(raw: { token: string }): Promise<InvitationPreview> {
    const { token } = parseInput(invitationTokenInput, raw ?? {});
    const row = await this.organizations.openInvitation(sha256Hex(token));
    if (!row) throw new DomainError('not_found', 'This invitation link is not valid: it was used, revoked or has expired', { reason: 'invitation_invalid' });
    return { organizationName: row.organization_name, email: row.email, role: row.role, expiresAt: new Date(row.expires_at) };
  }

  /** The signed-in account joins with the invitation's role; the link works once. */
  async acceptInvitation(actor: Actor, raw: { token: string }): Promise<OrganizationView> {
    const { token } = parseInput(invitationTokenInput, raw ?? {});
    const { outcome, organizationId } = await this.organizations.accept(sha256Hex(token), actor.userId);
    if (outcome === 'invalid') throw new DomainError('not_found', 'This invitation link is not valid: it was used, revoked or has expired', { reason: 'invitation_invalid' });
    this.deps.log.info({ organizationId, userId: actor.userId, outcome }, 'organization invitation accepted');
    return this.get(actor, organizationId!);
  }

  /** A member's role or monthly cap (owner, admin); never the owner's (ownership moves by a transfer). */
  async updateMember(actor: Actor, raw: UpdateMemberInput): Promise<MemberView> {
    const input = parseInput(updateMemberInput, raw ?? {});
    const access = await this.access(actor, input.organizationId, 'manageMembers');
    const target = await this.organizations.member(access.organizationId, input.userId);
    if (!target) throw new DomainError('not_found', 'No such member');
    if (target.role === 'owner' && input.role !== undefined) throw new DomainError('conflict', "The owner's role changes only by transferring ownership", { reason: 'owner_role' });
    if (target.role === 'owner' && input.monthlySpendCap !== undefined && access.role !== 'owner') throw new DomainError('forbidden', "Only the owner sets the owner's cap", { reason: 'organization_role_required' });
    await this.organizations.updateMember(access.organizationId, input.userId, { role: input.role, monthlySpendCap: input.monthlySpendCap });
    if (input.monthlySpendCap !== undefined) await this.deps.keys.evictEverywhere(await this.deps.keys.activeKeyIds(access.organizationId, input.userId));
    const updated = (await this.organizations.members(access.organizationId)).find((m) => m.user_id === input.userId)!;
    return toMemberView(updated, true);
  }

  /** Removes a member (owner, admin): their keys of the organization are revoked in the same transaction and stop at once on every process. */
  async removeMember(actor: Actor, raw: { organizationId: string; userId: string }): Promise<void> {
    const input = parseInput(memberInput, raw ?? {});
    const access = await this.access(actor, input.organizationId, 'manageMembers');
    await this.removeFrom(access.organizationId, input.userId);
  }

  /** The caller leaves; the owner must transfer ownership first. */
  async leave(actor: Actor, organizationId: string): Promise<void> {
    const access = await this.access(actor, organizationId);
    if (access.role === 'owner') throw new DomainError('conflict', 'The owner cannot leave; transfer ownership first', { reason: 'owner_cannot_leave' });
    await this.removeFrom(access.organizationId, actor.userId);
  }

  private async removeFrom(organizationId: string, userId: string): Promise<void> {
    const { removed, result: keyIds = [] } = await this.organizations.remove(organizationId, userId, (tx) => this.deps.keys.revokeMemberKeys(tx, organizationId, userId));
    if (!removed) throw new DomainError('not_found', 'No such member (the owner cannot be removed)');
    await this.deps.keys.evictEverywhere(keyIds);
    this.deps.log.info({ organizationId, userId, keysRevoked: keyIds.length }, 'organization member removed');
  }

  async transferOwnership(actor: Actor, raw: { organizationId: string; userId: string }): Promise<OrganizationView> {
    const input = parseInput(memberInput, raw ?? {});
    const access = await this.access(actor, input.organizationId, 'transferOwnership');
    if (!(await this.organizations.transferOwnership(access.organizationId, actor.userId, input.userId))) throw new DomainError('not_found', 'No such member');
    this.deps.log.info({ organizationId: access.organizationId, from: actor.userId, to: input.userId }, 'organization ownership transferred');
    return this.get(actor, access.organizationId);
  }

  /** The organization's keys the caller may see: every key for owners and admins, their own for the others. */
  async keys(actor: Actor, organizationId: string): Promise<KeyView[]> {
    const access = await this.access(actor, organizationId);
    return this.deps.keys.listOwned(access.organizationId, access.may('manageKeys') ? undefined : actor.userId);
  }

  /** Any member makes keys of the organization; each names them, and spends within their cap and the organization's. */
  async createKey(actor: Actor, organizationId: string, raw: CreateKeyInput): Promise<CreatedKeyView> {
    const access = await this.access(actor, organizationId);
    return this.deps.keys.createOwned({ ownerId: access.organizationId, createdBy: actor.userId }, raw);
  }

  /** Owners and admins revoke any key of the organization, the others their own. */
  async revokeKey(actor: Actor, organizationId: string, keyId: string): Promise<void> {
    const access = await this.access(actor, organizationId);
    await this.deps.keys.revokeOwned({ ownerId: access.organizationId, createdBy: actor.userId }, keyId, !access.may('manageKeys'));
  }
}

function toView(row: MembershipRow): OrganizationView {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    ownerId: row.owner_id,
    monthlySpendCap: row.monthly_spend_cap_usd === null ? null : formatUsd(row.monthly_spend_cap_usd),
    myMonthlySpendCap: row.member_cap_usd === null ? null : formatUsd(row.member_cap_usd),
    createdAt: new Date(row.created_at),
  };
}

function toMemberView(row: MemberRow, detailed: boolean): MemberView {
  return {
    userId: row.user_id,
    name: row.username ?? row.email ?? row.user_id,
    email: detailed ? row.email : null,
    role: row.role,
    monthlySpendCap: detailed && row.monthly_spend_cap_usd !== null ? formatUsd(row.monthly_spend_cap_usd) : null,
    monthSpent: detailed ? formatUsd(row.month_spent) : null,
    joinedAt: new Date(row.joined_at),
  };
}

function toInvitationView(row: InvitationRow): InvitationView {
  const status = row.accepted_at ? 'accepted' : row.revoked_at ? 'revoked' : new Date(row.expires_at).getTime() <= Date.now() ? 'expired' : 'open';
  return { id: row.id, email: row.email, role: row.role, status, createdAt: new Date(row.created_at), expiresAt: new Date(row.expires_at) };
}
