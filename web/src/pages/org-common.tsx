import type { ComponentType } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.js';
import type { OrganizationRole } from '../gql/graphql.js';
import { useI18n, type Translate } from '../i18n.js';
import { may, useOrganization, type Capability, type Organization } from '../organization.js';
import { Link } from '../router.js';
import type { StringKey } from '../strings.js';
import { Loading, Notice, Page } from '../ui.js';

/** The members of an organization as the members page and the usage filter read them. */
export const OrganizationMembersDocument = graphql(`
  query OrganizationMembers($organizationId: ID!) {
    organization(id: $organizationId) {
      id
      name
      role
      ownerId
      monthlySpendCap
      myMonthlySpendCap
    }
    organizationMembers(organizationId: $organizationId) {
      userId
      name
      email
      role
      monthlySpendCap
      monthSpent
      joinedAt
    }
  }
`);

export const ROLES: OrganizationRole[] = ['OWNER', 'ADMIN', 'BILLING', 'MEMBER'];
/** Roles an invitation or a role change may give: ownership moves only by a transfer. */
export const GRANTABLE: OrganizationRole[] = ['ADMIN', 'BILLING', 'MEMBER'];

export function roleName(t: Translate, role: OrganizationRole): string {
  return t(`org.role.${role}`);
}

/** The usage page's member filter ("all" first), for the roles that see every member's usage; null otherwise. */
export function useMemberOptions(organization: Organization | null, all: string): { value: string; label: string }[] | null {
  const seesAll = organization !== null && may(organization.role, 'viewAllUsage');
  const [{ data }] = useQuery({ query: OrganizationMembersDocument, variables: { organizationId: organization?.id ?? '' }, pause: !seesAll });
  if (!seesAll) return null;
  return [{ value: '', label: all }, ...(data?.organizationMembers ?? []).map((m) => ({ value: m.userId, label: m.name }))];
}

/**
 * A page that exists only in an organization context: the page itself with the organization shown, or (personal
 * context) a note saying to choose one in the header, or create one; with `capability`, a note for roles without it.
 */
export function OrganizationOnly({ title, capability, page: Shown }: { title: StringKey; capability?: Capability; page: ComponentType<{ organization: Organization }> }) {
  const { t } = useI18n();
  const { current, loading } = useOrganization();
  if (loading) return <Page title={t(title)}><Loading /></Page>;
  if (!current) {
    return (
      <Page title={t(title)}>
        <Notice>{t('org.chooseFirst')}</Notice>
        <Link to="/app/org/new">{t('nav.orgCreate')}</Link>
      </Page>
    );
  }
  if (capability && !may(current.role, capability)) {
    return (
      <Page title={t(title)}>
        <Notice kind="warning">{t('org.roleRequired', { role: roleName(t, current.role) })}</Notice>
      </Page>
    );
  }
  return <Shown key={current.id} organization={current} />;
}
