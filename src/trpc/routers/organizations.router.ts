import { createKeyInput, keyIdInput } from '../../keys/keys.schemas.js';
import {
  createOrganizationInput,
  invitationIdInput,
  invitationTokenInput,
  inviteMemberInput,
  memberInput,
  organizationIdInput,
  updateMemberInput,
  updateOrganizationInput,
} from '../../organizations/organizations.schemas.js';
import { authedProcedure, publicProcedure, router, serviceInput } from '../trpc.js';

/** A key of an organization: the key's own input beside the organization's id (the service takes them apart). */
const organizationKeyInput = createKeyInput.extend(organizationIdInput.shape);
const organizationKeyIdInput = keyIdInput.extend(organizationIdInput.shape);

const ok = { ok: true as const };

/**
 * Organizations (issue 56), the same operations as GraphQL and REST over OrganizationsService, which checks every
 * caller's membership and role: any id of an organization the caller does not belong to is NOT_FOUND.
 */
export const organizationsRouter = router({
  list: authedProcedure.query(({ ctx }) => ctx.services.organizations.list(ctx.actor)),
  get: authedProcedure.input(serviceInput(organizationIdInput)).query(({ ctx, input }) => ctx.services.organizations.get(ctx.actor, input?.organizationId)),
  create: authedProcedure.input(serviceInput(createOrganizationInput)).mutation(({ ctx, input }) => ctx.services.organizations.create(ctx.actor, input)),
  update: authedProcedure.input(serviceInput(updateOrganizationInput)).mutation(({ ctx, input }) => ctx.services.organizations.update(ctx.actor, input)),
  members: authedProcedure.input(serviceInput(organizationIdInput)).query(({ ctx, input }) => ctx.services.organizations.members(ctx.actor, input?.organizationId)),
  updateMember: authedProcedure.input(serviceInput(updateMemberInput)).mutation(({ ctx, input }) => ctx.services.organizations.updateMember(ctx.actor, input)),
  removeMember: authedProcedure.input(serviceInput(memberInput)).mutation(async ({ ctx, input }) => {
    await ctx.services.organizations.removeMember(ctx.actor, input);
    return ok;
  }),
  leave: authedProcedure.input(serviceInput(organizationIdInput)).mutation(async ({ ctx, input }) => {
    await ctx.services.organizations.leave(ctx.actor, input?.organizationId);
    return ok;
  }),
  transferOwnership: authedProcedure.input(serviceInput(memberInput)).mutation(({ ctx, input }) => ctx.services.organizations.transferOwnership(ctx.actor, input)),
  invitations: authedProcedure.input(serviceInput(organizationIdInput)).query(({ ctx, input }) => ctx.services.organizations.invitations(ctx.actor, input?.organizationId)),
  invite: authedProcedure.input(serviceInput(inviteMemberInput)).mutation(({ ctx, input }) => ctx.services.organizations.invite(ctx.actor, input, ctx.caller.origin ?? undefined)),
  revokeInvitation: authedProcedure.input(serviceInput(invitationIdInput)).mutation(async ({ ctx, input }) => {
    await ctx.services.organizations.revokeInvitation(ctx.actor, input);
    return ok;
  }),
  /** No sign-in: the link's token is the secret. */
  previewInvitation: publicProcedure.input(serviceInput(invitationTokenInput)).query(({ ctx, input }) => ctx.services.organizations.previewInvitation(input)),
  acceptInvitation: authedProcedure.input(serviceInput(invitationTokenInput)).mutation(({ ctx, input }) => ctx.services.organizations.acceptInvitation(ctx.actor, input)),
  keys: authedProcedure.input(serviceInput(organizationIdInput)).query(({ ctx, input }) => ctx.services.organizations.keys(ctx.actor, input?.organizationId)),
  createKey: authedProcedure.input(serviceInput(organizationKeyInput)).mutation(({ ctx, input }) => {
    const { organizationId, ...key } = input ?? { organizationId: undefined };
    return ctx.services.organizations.createKey(ctx.actor, organizationId as string, key);
  }),
  revokeKey: authedProcedure.input(serviceInput(organizationKeyIdInput)).mutation(async ({ ctx, input }) => {
    await ctx.services.organizations.revokeKey(ctx.actor, input?.organizationId, input?.keyId);
    return ok;
  }),
});
