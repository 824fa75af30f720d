import { DomainError } from '../shared/errors.js';

/** A member's role in an organization (issue 56): what each may do is `CAPABILITIES` below, checked on the server. */
export const ROLES = ['owner', 'admin', 'billing', 'member'] as const;
export type Role = (typeof ROLES)[number];
/** Roles an invitation or a role change may give: ownership only moves by a transfer. */
export const GRANTABLE_ROLES = ['admin', 'billing', 'member'] as const;
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

/**
 * Who may do what. Every member sees the organization, its members and their roles, and makes and revokes keys of
 * their own within their caps, and sees their own usage. Beyond that:
 * - owner: everything, and transfers ownership;
 * - admin: members (invitations, roles, removal, caps) and every key;
 * - billing: the wallet (balance, invoices, statements) and every member's usage, which statements show anyway.
 */
export const CAPABILITIES = {
  /** Invite, remove, change roles, revoke invitations, set caps, rename. */
  manageMembers: ['owner', 'admin'],
  /** See and revoke every key of the organization (a member sees their own). */
  manageKeys: ['owner', 'admin'],
  /** The balance, invoices, payment methods and statements. */
  billing: ['owner', 'billing'],
  /** Usage of every member and key (a member sees their own). */
  viewAllUsage: ['owner', 'admin', 'billing'],
  transferOwnership: ['owner'],
} as const satisfies Record<string, readonly Role[]>;
export type Capability = keyof typeof CAPABILITIES;

export function may(role: Role, capability: Capability): boolean {
  return (CAPABILITIES[capability] as readonly Role[]).includes(role);
}

/** Refuses a member whose role lacks the capability (403); outsiders never get this far (404, see the service). */
export function requireRole(role: Role, capability: Capability): void {
  if (!may(role, capability)) {
    throw new DomainError('forbidden', `Your role in this organization (${role}) does not allow this`, { reason: 'organization_role_required' });
  }
}
