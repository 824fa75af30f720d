import { requireActor, type RequestContext } from '../src/context.js';
import type { OrganizationAccess } from '../src/organizations/organizations.service.js';
import { DomainError } from '../src/shared/errors.js';

/** What a subscription to an organization's events carries. */
export type OrganizationFeed = 'balance' | 'usage' | 'keys';

/** How long a running subscription trusts the membership it checked: a removed member hears nothing after this. */
const RECHECK_MS = 1_000;

/**
 * One member's hearing of an organization's events. The organization's id is its ledger owner id, so the account
 * event hub already publishes its balance, usage and key events under that id; this decides which of them the member
 * may hear, as the queries do:
 * - balance: owners, admins and billing (the `billing` or `manageMembers` capability);
 * - usage: every member's for `viewAllUsage` roles, a plain member's own keys' only;
 * - keys: every key for `manageKeys` roles, one's own for the others.
 * The membership is checked before the stream starts (an outsider gets NOT_FOUND, a role without the right FORBIDDEN)
 * and again at most every RECHECK_MS while it runs: a removed member's stream ends, a changed role applies.
 */
export class OrganizationAudience {
  private access!: OrganizationAccess;
  private checkedAt = 0;
  /** The member's own keys of the organization, when they see only their own (null: every key). */
  private ownKeys: Set<string> | null = null;

  private constructor(
    private readonly context: RequestContext,
    readonly organizationId: string,
    private readonly feed: OrganizationFeed,
  ) {}

  /** Checks the caller's standing first: throws (NOT_FOUND, FORBIDDEN) before any stream exists. */
  static async open(context: RequestContext, organizationId: string, feed: OrganizationFeed): Promise<OrganizationAudience> {
    const audience = new OrganizationAudience(context, organizationId, feed);
    await audience.check();
    return audience;
  }

  /** Whether the member may still hear this organization (false ends the stream); refreshed at most every RECHECK_MS. */
  async stillMember(): Promise<boolean> {
    if (Date.now() - this.checkedAt < RECHECK_MS) return true;
    try {
      await this.check();
      return true;
    } catch (error) {
      if (error instanceof DomainError) return false;
      throw error;
    }
  }

  /** Whether a key's events and usage reach this member (their own key, or every key for their role). */
  async hearsKey(keyId: string | null, created = false): Promise<boolean> {
    if (this.ownKeys === null) return true;
    if (keyId === null) return false;
    // A key the member just made: their list of own keys is read again once.
    if (created && !this.ownKeys.has(keyId)) await this.readOwnKeys();
    return this.ownKeys.has(keyId);
  }

  private async check(): Promise<void> {
    const actor = requireActor(this.context);
    this.access = await this.context.services.organizations.access(actor, this.organizationId);
    this.checkedAt = Date.now();
    if (this.feed === 'balance' && !this.access.may('billing') && !this.access.may('manageMembers')) {
      throw new DomainError('forbidden', `Your role in this organization (${this.access.role}) does not show its balance`, { reason: 'organization_role_required' });
    }
    const everyKey = this.feed === 'usage' ? this.access.may('viewAllUsage') : this.access.may('manageKeys');
    if (everyKey || this.feed === 'balance') this.ownKeys = null;
    else await this.readOwnKeys();
  }

  private async readOwnKeys(): Promise<void> {
    // The organization's keys as this member may list them: their own, for a role that does not see every key.
    const keys = await this.context.services.organizations.keys(requireActor(this.context), this.organizationId);
    // Never forgets a key: a request of a key revoked a moment ago may still settle.
    this.ownKeys = new Set([...(this.ownKeys ?? []), ...keys.map((key) => key.id)]);
  }
}
