import { z } from 'zod';
import { usdAmount } from '../shared/validation.js';
import { GRANTABLE_ROLES } from './roles.js';

const id = (what: string) => z.uuid(`Input should be a valid UUID (${what})`);
const name = z.string().trim().min(1, 'Name must not be empty').max(100, 'Name must be at most 100 characters');
const cap = usdAmount.refine((v) => !v.startsWith('-'), 'The spend cap must not be negative').nullable();

export const organizationIdInput = z.strictObject({ organizationId: id('organizationId') });

export const createOrganizationInput = z.strictObject({ name });
export type CreateOrganizationInput = z.input<typeof createOrganizationInput>;

export const updateOrganizationInput = z.strictObject({
  organizationId: id('organizationId'),
  name: name.optional(),
  /** The whole organization's spend per UTC month; null: none. */
  monthlySpendCap: cap.optional(),
});
export type UpdateOrganizationInput = z.input<typeof updateOrganizationInput>;

export const inviteMemberInput = z.strictObject({
  organizationId: id('organizationId'),
  email: z.email('Input should be a valid e-mail address').max(254).transform((v) => v.toLowerCase()),
  role: z.enum(GRANTABLE_ROLES).default('member'),
  /** The language of the invitation e-mail; the operator's default when absent. */
  language: z.enum(['ru', 'en']).optional(),
});
export type InviteMemberInput = z.input<typeof inviteMemberInput>;

export const invitationIdInput = z.strictObject({ organizationId: id('organizationId'), invitationId: id('invitationId') });

export const invitationTokenInput = z.strictObject({ token: z.string().min(16, 'Input should be an invitation token').max(200) });

export const memberInput = z.strictObject({ organizationId: id('organizationId'), userId: id('userId') });

export const updateMemberInput = z.strictObject({
  organizationId: id('organizationId'),
  userId: id('userId'),
  role: z.enum(GRANTABLE_ROLES).optional(),
  /** The member's spend per UTC month across their keys of this organization; null: none. */
  monthlySpendCap: cap.optional(),
});
export type UpdateMemberInput = z.input<typeof updateMemberInput>;
