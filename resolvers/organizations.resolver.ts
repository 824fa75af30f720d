import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import { domainInput } from './args.js';
import { ApiKey, CreatedApiKey, CreateKeyInput } from './types/keys.types.js';
import {
  CreateOrganizationInput,
  InviteMemberInput,
  Organization,
  OrganizationInvitation,
  OrganizationInvitationPreview,
  OrganizationMember,
  UpdateMemberInput,
  UpdateOrganizationInput,
} from './types/organizations.types.js';

/**
 * Organizations (issue 56): a thin skin over OrganizationsService, which checks every caller's membership and role.
 * An organization the caller does not belong to is NOT_FOUND on every field (ids cannot be probed); a member whose
 * role does not allow an operation gets FORBIDDEN (reason organization_role_required).
 */
@Resolver()
export class OrganizationsResolver {
  @Query(() => [Organization], { description: 'The organizations the signed-in account belongs to, with its role in each.' })
  async organizations(@Ctx() ctx: RequestContext): Promise<Organization[]> {
    return ctx.services.organizations.list(requireActor(ctx));
  }

  @Query(() => Organization, { description: 'One organization of the caller’s; NOT_FOUND for any other id.' })
  async organization(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<Organization> {
    return ctx.services.organizations.get(requireActor(ctx), id);
  }

  @Query(() => [OrganizationMember], { description: 'Every member with their role; email, caps and spend for managers and billing (and one’s own).' })
  async organizationMembers(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string): Promise<OrganizationMember[]> {
    return ctx.services.organizations.members(requireActor(ctx), organizationId);
  }

  @Query(() => [OrganizationInvitation], { description: 'The organization’s invitations, newest first (owner, admin).' })
  async organizationInvitations(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string): Promise<OrganizationInvitation[]> {
    return ctx.services.organizations.invitations(requireActor(ctx), organizationId);
  }

  @Query(() => [ApiKey], { description: 'The organization’s active keys: every key for owners and admins, one’s own for the others.' })
  async organizationKeys(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string): Promise<ApiKey[]> {
    return ctx.services.organizations.keys(requireActor(ctx), organizationId);
  }

  @Query(() => OrganizationInvitationPreview, { description: 'What an invitation link offers (no sign-in needed); NOT_FOUND once used, revoked or expired.' })
  async invitationPreview(@Ctx() ctx: RequestContext, @Arg('token', () => String) token: string): Promise<OrganizationInvitationPreview> {
    return ctx.services.organizations.previewInvitation({ token });
  }

  @Mutation(() => Organization, { description: 'Founds an organization owned by the caller (a verified e-mail is required).' })
  async createOrganization(@Ctx() ctx: RequestContext, @Arg('input', () => CreateOrganizationInput) input: CreateOrganizationInput): Promise<Organization> {
    return ctx.services.organizations.create(requireActor(ctx), domainInput(input));
  }

  @Mutation(() => Organization, { description: 'Renames the organization or sets its monthly cap (owner, admin).' })
  async updateOrganization(@Ctx() ctx: RequestContext, @Arg('input', () => UpdateOrganizationInput) input: UpdateOrganizationInput): Promise<Organization> {
    return ctx.services.organizations.update(requireActor(ctx), domainInput(input, 'monthlySpendCap'));
  }

  @Mutation(() => OrganizationInvitation, { description: 'Invites an address by e-mail (owner, admin): a single-use link that expires.' })
  async inviteMember(@Ctx() ctx: RequestContext, @Arg('input', () => InviteMemberInput) input: InviteMemberInput): Promise<OrganizationInvitation> {
    return ctx.services.organizations.invite(requireActor(ctx), domainInput(input), ctx.caller.origin ?? undefined);
  }

  @Mutation(() => Boolean, { description: 'Revokes an open invitation (owner, admin); its link stops working.' })
  async revokeInvitation(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string, @Arg('invitationId', () => ID) invitationId: string): Promise<boolean> {
    await ctx.services.organizations.revokeInvitation(requireActor(ctx), { organizationId, invitationId });
    return true;
  }

  @Mutation(() => Organization, { description: 'The signed-in account joins with the invitation’s role; the link works once.' })
  async acceptInvitation(@Ctx() ctx: RequestContext, @Arg('token', () => String) token: string): Promise<Organization> {
    return ctx.services.organizations.acceptInvitation(requireActor(ctx), { token });
  }

  @Mutation(() => OrganizationMember, { description: 'Changes a member’s role or monthly cap (owner, admin); the owner’s role changes only by a transfer.' })
  async updateMember(@Ctx() ctx: RequestContext, @Arg('input', () => UpdateMemberInput) input: UpdateMemberInput): Promise<OrganizationMember> {
    return ctx.services.organizations.updateMember(requireActor(ctx), domainInput(input, 'monthlySpendCap'));
  }

  @Mutation(() => Boolean, { description: 'Removes a member (owner, admin): their keys of the organization stop at once.' })
  async removeMember(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string, @Arg('userId', () => ID) userId: string): Promise<boolean> {
    await ctx.services.organizations.removeMember(requireActor(ctx), { organizationId, userId });
    return true;
  }

  @Mutation(() => Boolean, { description: 'The caller leaves the organization (the owner transfers ownership first); their keys of it stop.' })
  async leaveOrganization(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string): Promise<boolean> {
    await ctx.services.organizations.leave(requireActor(ctx), organizationId);
    return true;
  }

  @Mutation(() => Organization, { description: 'Makes another member the owner (owner only); the former owner becomes an admin.' })
  async transferOwnership(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string, @Arg('userId', () => ID) userId: string): Promise<Organization> {
    return ctx.services.organizations.transferOwnership(requireActor(ctx), { organizationId, userId });
  }

  @Mutation(() => CreatedApiKey, { description: 'A key of the organization (any member): it names the caller and spends within their cap and the organization’s.' })
  async createOrganizationKey(
    @Ctx() ctx: RequestContext,
    @Arg('organizationId', () => ID) organizationId: string,
    @Arg('input', () => CreateKeyInput, { nullable: true }) input?: CreateKeyInput,
  ): Promise<CreatedApiKey> {
    return ctx.services.organizations.createKey(requireActor(ctx), organizationId, domainInput(input, 'label', 'monthlySpendCap'));
  }

  @Mutation(() => Boolean, { description: 'Revokes a key of the organization: owners and admins any, the others their own.' })
  async revokeOrganizationKey(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string, @Arg('keyId', () => ID) keyId: string): Promise<boolean> {
    await ctx.services.organizations.revokeKey(requireActor(ctx), organizationId, keyId);
    return true;
  }
}
