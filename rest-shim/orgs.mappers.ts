import { z } from 'zod';
import type { KeyView } from '../src/keys/keys.service.js';
import type { InvitationPreview, InvitationView, MemberView, OrganizationView } from '../src/organizations/organizations.service.js';
import { ROLES } from '../src/organizations/roles.js';
import { decimal, timestamp } from './answer-fields.js';
import { keyAnswer, keyJson } from './mappers.js';

/** Organizations' views -> the /orgs answers (snake_case, decimals as strings, ISO timestamps), typed by their schemas. */

const role = z.enum(ROLES).describe('owner, admin, billing or member');

export const organizationAnswer = z
  .object({
    id: z.string().describe('The organization’s id (its ledger owner id)'),
    name: z.string(),
    role: role.describe('The caller’s role in it'),
    owner_id: z.string(),
    monthly_spend_cap: decimal.nullable().describe('USD per UTC month across every key of the organization; null: none'),
    my_monthly_spend_cap: decimal.nullable().describe('The caller’s own cap as a member; null: none'),
    created_at: timestamp,
  })
  .meta({ id: 'Organization', description: 'An organization the caller belongs to, with the caller’s role.' });

export function organizationJson(view: OrganizationView): z.infer<typeof organizationAnswer> {
  return {
    id: view.id,
    name: view.name,
    role: view.role,
    owner_id: view.ownerId,
    monthly_spend_cap: view.monthlySpendCap,
    my_monthly_spend_cap: view.myMonthlySpendCap,
    created_at: view.createdAt.toISOString(),
  };
}

export const memberAnswer = z
  .object({
    user_id: z.string(),
    name: z.string().describe('The username, or the e-mail when none is set'),
    email: z.string().nullable(),
    role,
    monthly_spend_cap: decimal.nullable(),
    month_spent: decimal.nullable().describe('What the member’s keys of the organization spent this UTC month'),
    joined_at: timestamp,
  })
  .meta({ id: 'OrganizationMember', description: 'A member. A plain member sees the others’ name and role only (email, cap and spend null).' });

export function memberJson(view: MemberView): z.infer<typeof memberAnswer> {
  return {
    user_id: view.userId,
    name: view.name,
    email: view.email,
    role: view.role,
    monthly_spend_cap: view.monthlySpendCap,
    month_spent: view.monthSpent,
    joined_at: view.joinedAt.toISOString(),
  };
}

export const invitationAnswer = z
  .object({ id: z.string(), email: z.string(), role, status: z.enum(['open', 'accepted', 'revoked', 'expired']), created_at: timestamp, expires_at: timestamp })
  .meta({ id: 'OrganizationInvitation', description: 'An invitation sent by e-mail: a single-use link that expires.' });

export function invitationJson(view: InvitationView): z.infer<typeof invitationAnswer> {
  return { id: view.id, email: view.email, role: view.role, status: view.status, created_at: view.createdAt.toISOString(), expires_at: view.expiresAt.toISOString() };
}

export const invitationPreviewAnswer = z
  .object({ organization_name: z.string(), email: z.string(), role, expires_at: timestamp })
  .meta({ id: 'OrganizationInvitationPreview', description: 'What an invitation link offers (no sign-in needed).' });

export function invitationPreviewJson(view: InvitationPreview): z.infer<typeof invitationPreviewAnswer> {
  return { organization_name: view.organizationName, email: view.email, role: view.role, expires_at: view.expiresAt.toISOString() };
}

export const organizationKeyAnswer = keyAnswer
  .extend({ created_by: z.string().nullable().describe('The member who made the key') })
  .meta({ id: 'OrganizationKey', description: 'A key of an organization: a Key naming the member who made it.' });

export function organizationKeyJson(view: KeyView): z.infer<typeof organizationKeyAnswer> {
  return { ...keyJson(view), created_by: view.createdBy };
}
