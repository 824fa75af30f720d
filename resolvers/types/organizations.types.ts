import { Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import type {
  CreateOrganizationInput as ServiceCreateOrganizationInput,
  InviteMemberInput as ServiceInviteMemberInput,
  UpdateMemberInput as ServiceUpdateMemberInput,
  UpdateOrganizationInput as ServiceUpdateOrganizationInput,
} from '../../src/organizations/organizations.schemas.js';
import type { GrantableRole, Role } from '../../src/organizations/roles.js';
import type { SameFields } from '../args.js';

/** The values are the service's role names, so a role passes between GraphQL and the service unchanged. */
export enum OrganizationRole {
  OWNER = 'owner',
  ADMIN = 'admin',
  BILLING = 'billing',
  MEMBER = 'member',
}
registerEnumType(OrganizationRole, {
  name: 'OrganizationRole',
  description:
    'A member’s role: OWNER (everything, transfers ownership), ADMIN (members, invitations, caps, every key), BILLING (balance, invoices, statements, every member’s usage), MEMBER (own keys within their caps, own usage).',
});

/** Every service role has its GraphQL value (a role added to roles.ts alone fails to compile here). */
export const organizationRolesMatch: [Exclude<Role, `${OrganizationRole}`>, Exclude<`${OrganizationRole}`, Role>] extends [never, never] ? true : false = true;

@ObjectType({ description: 'An organization the caller belongs to: a team with a wallet of its own (its id is its ledger owner id).' })
export class Organization {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => OrganizationRole, { description: 'The caller’s role in it.' }) role!: Role;
  @Field(() => ID) ownerId!: string;
  @Field(() => String, { nullable: true, description: 'USD per calendar month (UTC) across every key of the organization; null: none.' })
  monthlySpendCap!: string | null;
  @Field(() => String, { nullable: true, description: 'The caller’s own monthly cap as a member; null: none.' })
  myMonthlySpendCap!: string | null;
  @Field(() => DateTimeISOResolver) createdAt!: Date;
}

@ObjectType({ description: 'A member of an organization. A plain member sees the others’ name and role only (email, cap and spend null).' })
export class OrganizationMember {
  @Field(() => ID) userId!: string;
  @Field(() => String, { description: 'The username, or the e-mail when none is set.' }) name!: string;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => OrganizationRole) role!: Role;
  @Field(() => String, { nullable: true, description: 'USD per calendar month across the member’s keys of the organization; null: none (or not shown).' })
  monthlySpendCap!: string | null;
  @Field(() => String, { nullable: true, description: 'What the member’s keys of the organization spent this UTC month.' })
  monthSpent!: string | null;
  @Field(() => DateTimeISOResolver) joinedAt!: Date;
}

@ObjectType({ description: 'An invitation sent by e-mail: a single-use link that expires.' })
export class OrganizationInvitation {
  @Field(() => ID) id!: string;
  @Field(() => String) email!: string;
  @Field(() => OrganizationRole) role!: Role;
  @Field(() => String, { description: '`open`, `accepted`, `revoked` or `expired`.' }) status!: 'open' | 'accepted' | 'revoked' | 'expired';
  @Field(() => DateTimeISOResolver) createdAt!: Date;
  @Field(() => DateTimeISOResolver) expiresAt!: Date;
}

@ObjectType({ description: 'What an invitation link offers, for anyone holding the link (no sign-in needed).' })
export class OrganizationInvitationPreview {
  @Field(() => String) organizationName!: string;
  @Field(() => String, { description: 'The address the invitation was sent to.' }) email!: string;
  @Field(() => OrganizationRole) role!: Role;
  @Field(() => DateTimeISOResolver) expiresAt!: Date;
}

@InputType()
export class CreateOrganizationInput {
  @Field(() => String, { description: '1-100 characters.' }) name!: string;
}

@InputType()
export class UpdateOrganizationInput {
  @Field(() => ID) organizationId!: string;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'USD per calendar month (UTC) for the whole organization; an explicit null removes the cap.' })
  monthlySpendCap?: string | null;
}

@InputType()
export class InviteMemberInput {
  @Field(() => ID) organizationId!: string;
  @Field(() => String) email!: string;
  // Typed as the service's input: GraphQL takes any role, and the service refuses OWNER (422).
  @Field(() => OrganizationRole, { nullable: true, description: 'ADMIN, BILLING or MEMBER (default); ownership moves only by a transfer.' })
  role?: GrantableRole | null;
  @Field(() => String, { nullable: true, description: '`ru` or `en`: the e-mail’s language; default: the operator’s.' })
  language?: 'ru' | 'en' | null;
}

@InputType()
export class UpdateMemberInput {
  @Field(() => ID) organizationId!: string;
  @Field(() => ID) userId!: string;
  // Typed as the service's input: GraphQL takes any role, and the service refuses OWNER (422).
  @Field(() => OrganizationRole, { nullable: true, description: 'ADMIN, BILLING or MEMBER; never the owner’s (transfer ownership instead).' })
  role?: GrantableRole | null;
  @Field(() => String, { nullable: true, description: 'USD per calendar month (UTC) across the member’s keys of the organization; an explicit null removes the cap.' })
  monthlySpendCap?: string | null;
}

/** The GraphQL inputs name exactly the service's fields: one added to the zod schema alone fails to compile here. */
export const organizationInputsMatch: [
  SameFields<CreateOrganizationInput, ServiceCreateOrganizationInput>,
  SameFields<UpdateOrganizationInput, ServiceUpdateOrganizationInput>,
  SameFields<InviteMemberInput, ServiceInviteMemberInput>,
  SameFields<UpdateMemberInput, ServiceUpdateMemberInput>,
] = [true, true, true, true];
