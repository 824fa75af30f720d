import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids.js';
import { USAGE_KINDS } from '../ledger/kinds.js';
import type { GrantableRole, Role } from './roles.js';

/**
 * The organizations' tables (migrations/Migration20261129500000_organizations.ts). OrganizationsService keeps the
 * rules; every statement here is plain SQL, a change that must be whole runs in one transaction.
 */
export interface OrganizationRow {
  id: string;
  name: string;
  owner_id: string;
  monthly_spend_cap_usd: string | null;
  created_at: Date;
}

export interface MembershipRow extends OrganizationRow {
  role: Role;
  member_cap_usd: string | null;
}

export interface MemberRow {
  user_id: string;
  username: string | null;
  email: string | null;
  role: Role;
  monthly_spend_cap_usd: string | null;
  joined_at: Date;
  /** Spent through the member's keys of the organization this UTC month (the ledger's usage rows). */
  month_spent: string;
}

export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: GrantableRole;
  invited_by: string;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

const USAGE_KIND_LIST = USAGE_KINDS.map((k) => `'${k}'`).join(',');
const MONTH_START = `date_trunc('month', now() at time zone 'utc') at time zone 'utc'`;
const INVITATION_COLUMNS = 'id, organization_id, email, role, invited_by, created_at, expires_at, accepted_at, revoked_at';

export class OrganizationsRepository {
  constructor(private readonly orm: MikroORM) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /**
   * A new organization: its ledger owner row in `users` (kind organization: no e-mail, no password, so nobody
   * signs in as it), its name, and its owner as its first member. Counts the owner's organizations under a lock of
   * the owner's row, so `maxOwned` holds under parallel creations; null when it would be passed.
   */
  create(ownerId: string, name: string, maxOwned: number): Promise<OrganizationRow | null> {
    return this.em().transactional(async (tx) => {
      await tx.execute('select 1 from users where id = ? for update', [ownerId]);
      const [{ n }] = (await tx.execute<{ n: number }[]>('select count(*)::int as n from organizations where owner_id = ?', [ownerId])) as [{ n: number }];
      if (n >= maxOwned) return null;
      const id = newId();
      await tx.execute(`insert into users (id, kind) values (?, 'organization')`, [id]);
      const [row] = await tx.execute<OrganizationRow[]>('insert into organizations (id, name, owner_id) values (?, ?, ?) returning *', [id, name, ownerId]);
      await tx.execute(`insert into organization_members (organization_id, user_id, role) values (?, ?, 'owner')`, [id, ownerId]);
      return row!;
    });
  }

  /** The organization with the caller's membership in it; undefined for an outsider or no such organization. */
  async membership(organizationId: string, userId: string): Promise<MembershipRow | undefined> {
    const [row] = await this.em().execute<MembershipRow[]>(
      `select o.*, m.role, m.monthly_spend_cap_usd as member_cap_usd from organizations o
         join organization_members m on m.organization_id = o.id and m.user_id = ? where o.id = ?`,
      [userId, organizationId],
    );
    return row;
  }

  /** Every organization the account belongs to, with its role, by name. */
  ofMember(userId: string): Promise<MembershipRow[]> {
    return this.em().execute(
      `select o.*, m.role, m.monthly_spend_cap_usd as member_cap_usd from organizations o
         join organization_members m on m.organization_id = o.id where m.user_id = ? order by lower(o.name), o.id`,
      [userId],
    );
  }

  async update(organizationId: string, changes: { name?: string; monthlySpendCap?: string | null }): Promise<OrganizationRow | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [];
    if (changes.name !== undefined) (sets.push('name = ?'), values.push(changes.name));
    if (changes.monthlySpendCap !== undefined) (sets.push('monthly_spend_cap_usd = ?'), values.push(changes.monthlySpendCap));
    const sql = sets.length ? `update organizations set ${sets.join(', ')} where id = ? returning *` : 'select * from organizations where id = ?';
    const [row] = await this.em().execute<OrganizationRow[]>(sql, [...values, organizationId]);
    return row;
  }

  /** Members with their month's spend through their keys of the organization, owner first, then by join date. */
  members(organizationId: string): Promise<MemberRow[]> {
    return this.em().execute(
      `select m.user_id, u.username, u.email, m.role, m.monthly_spend_cap_usd, m.joined_at,
              coalesce((select -sum(t.amount_usd) from transactions t join api_keys k on k.id = t.api_key_id
                         where t.user_id = m.organization_id and k.created_by = m.user_id
                           and t.kind in (${USAGE_KIND_LIST}) and t.created_at >= ${MONTH_START}), 0)::text as month_spent
         from organization_members m join users u on u.id = m.user_id
        where m.organization_id = ? order by (m.role = 'owner') desc, m.joined_at, m.user_id`,
      [organizationId],
    );
  }

  /** One member's name and role (no month spend), or undefined when not a member. */
  async member(organizationId: string, userId: string): Promise<Pick<MemberRow, 'user_id' | 'username' | 'email' | 'role'> | undefined> {
    const [row] = await this.em().execute<Pick<MemberRow, 'user_id' | 'username' | 'email' | 'role'>[]>(
      'select m.user_id, u.username, u.email, m.role from organization_members m join users u on u.id = m.user_id where m.organization_id = ? and m.user_id = ?',
      [organizationId, userId],
    );
    return row;
  }

  async updateMember(organizationId: string, userId: string, changes: { role?: GrantableRole; monthlySpendCap?: string | null }): Promise<boolean> {
    const sets: string[] = [];
    const values: unknown[] = [];
    if (changes.role !== undefined) (sets.push('role = ?'), values.push(changes.role));
    if (changes.monthlySpendCap !== undefined) (sets.push('monthly_spend_cap_usd = ?'), values.push(changes.monthlySpendCap));
    if (!sets.length) return (await this.membership(organizationId, userId)) !== undefined;
    // The owner's role never changes here: ownership moves only by a transfer.
    const notOwner = changes.role !== undefined ? ` and role <> 'owner'` : '';
    const rows = await this.em().execute(`update organization_members set ${sets.join(', ')} where organization_id = ? and user_id = ?${notOwner} returning user_id`, [...values, organizationId, userId]);
    return rows.length > 0;
  }

  /** Removes a member (never the owner) and, in the same transaction, `within` (revoking their keys); false when not a member. */
  remove<T>(organizationId: string, userId: string, within: (tx: EntityManager) => Promise<T>): Promise<{ removed: boolean; result?: T }> {
    return this.em().transactional(async (tx) => {
      const rows = await tx.execute(`delete from organization_members where organization_id = ? and user_id = ? and role <> 'owner' returning user_id`, [organizationId, userId]);
      if (!rows.length) return { removed: false };
      return { removed: true, result: await within(tx) };
    });
  }

  /** Moves ownership to another member (the old owner becomes an admin); false when `to` is not a member. */
  transferOwnership(organizationId: string, from: string, to: string): Promise<boolean> {
    return this.em().transactional(async (tx) => {
      const target = await tx.execute(`select 1 from organization_members where organization_id = ? and user_id = ? and role <> 'owner' for update`, [organizationId, to]);
      if (!target.length) return false;
      await tx.execute(`update organization_members set role = 'admin' where organization_id = ? and user_id = ? and role = 'owner'`, [organizationId, from]);
      await tx.execute(`update organization_members set role = 'owner' where organization_id = ? and user_id = ?`, [organizationId, to]);
      await tx.execute('update organizations set owner_id = ? where id = ?', [to, organizationId]);
      return true;
    });
  }

  async isMemberByEmail(organizationId: string, email: string): Promise<boolean> {
    const rows = await this.em().execute(`select 1 from organization_members m join users u on u.id = m.user_id where m.organization_id = ? and lower(u.email) = ?`, [organizationId, email]);
    return rows.length > 0;
  }

  /** A new invitation; an open one for the same address is revoked first (the newest link is the one that works). */
  invite(invitation: { organizationId: string; email: string; role: GrantableRole; tokenHash: string; invitedBy: string; expiresAt: Date }): Promise<InvitationRow> {
    return this.em().transactional(async (tx) => {
      await tx.execute('update organization_invitations set revoked_at = now() where organization_id = ? and email = ? and accepted_at is null and revoked_at is null', [invitation.organizationId, invitation.email]);
      const [row] = await tx.execute<InvitationRow[]>(
        `insert into organization_invitations (id, organization_id, email, role, token_hash, invited_by, expires_at) values (?, ?, ?, ?, ?, ?, ?) returning ${INVITATION_COLUMNS}`,
        [newId(), invitation.organizationId, invitation.email, invitation.role, invitation.tokenHash, invitation.invitedBy, invitation.expiresAt],
      );
      return row!;
    });
  }

  invitations(organizationId: string): Promise<InvitationRow[]> {
    return this.em().execute(`select ${INVITATION_COLUMNS} from organization_invitations where organization_id = ? order by created_at desc, id limit 200`, [organizationId]);
  }

  async revokeInvitation(organizationId: string, invitationId: string): Promise<boolean> {
    const rows = await this.em().execute('update organization_invitations set revoked_at = now() where id = ? and organization_id = ? and accepted_at is null and revoked_at is null returning id', [invitationId, organizationId]);
    return rows.length > 0;
  }

  /** An open invitation (not used, revoked or expired) by its token's hash, with its organization's name. */
  async openInvitation(tokenHash: string): Promise<(InvitationRow & { organization_name: string }) | undefined> {
    const [row] = await this.em().execute<(InvitationRow & { organization_name: string })[]>(
      `select i.id, i.organization_id, i.email, i.role, i.invited_by, i.created_at, i.expires_at, i.accepted_at, i.revoked_at, o.name as organization_name
         from organization_invitations i join organizations o on o.id = i.organization_id
        where i.token_hash = ? and i.accepted_at is null and i.revoked_at is null and i.expires_at > now()`,
      [tokenHash],
    );
    return row;
  }

  /**
   * Uses an invitation once: marks it accepted and adds the account as a member, in one transaction (two parallel
   * acceptances of one link: one wins). 'joined', 'member' (already one: the link is still used up) or 'invalid'.
   */
  accept(tokenHash: string, userId: string): Promise<{ outcome: 'joined' | 'member' | 'invalid'; organizationId?: string }> {
    return this.em().transactional(async (tx) => {
      const [invitation] = await tx.execute<{ id: string; organization_id: string; role: GrantableRole }[]>(
        `update organization_invitations set accepted_at = now(), accepted_by = ?
          where token_hash = ? and accepted_at is null and revoked_at is null and expires_at > now() returning id, organization_id, role`,
        [userId, tokenHash],
      );
      if (!invitation) return { outcome: 'invalid' };
      const added = await tx.execute(
        'insert into organization_members (organization_id, user_id, role) values (?, ?, ?) on conflict (organization_id, user_id) do nothing returning user_id',
        [invitation.organization_id, userId, invitation.role],
      );
      return { outcome: added.length ? 'joined' : 'member', organizationId: invitation.organization_id };
    });
  }
}
