import { useMutation, useQuery } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import type { Organization } from '../organization.js';
import { Link } from '../router.js';
import { Badge, Button, Card, Empty, Loading, Page, ProblemText, TableHead } from '../ui.js';
import { OrganizationOnly, roleName } from './org-common.js';

const OrganizationInvitationsDocument = graphql(`
  query OrganizationInvitations($organizationId: ID!) {
    organizationInvitations(organizationId: $organizationId) {
      id
      email
      role
      status
      createdAt
      expiresAt
    }
  }
`);
const RevokeInvitationDocument = graphql(`
  mutation RevokeInvitation($organizationId: ID!, $invitationId: ID!) {
    revokeInvitation(organizationId: $organizationId, invitationId: $invitationId)
  }
`);

const TONES = { open: 'warn', accepted: 'good', revoked: 'neutral', expired: 'bad' } as const;
type Status = keyof typeof TONES;
const isStatus = (status: string): status is Status => status in TONES;
/** The status word in lower case (the API's enum or string alike). */
const statusOf = (status: string): string => status.toLowerCase();

export function OrganizationInvitations() {
  return <OrganizationOnly title="nav.orgInvitations" capability="manageMembers" page={InvitationsPage} />;
}

/** The organization's invitations with their status; an open one may be revoked (its link stops working). */
function InvitationsPage({ organization }: { organization: Organization }) {
  const { t, formatDate, count } = useI18n();
  const organizationId = organization.id;
  const [{ data, fetching }, refetch] = useQuery({ query: OrganizationInvitationsDocument, variables: { organizationId }, requestPolicy: 'network-only' });
  const [revokeState, revoke] = useMutation(RevokeInvitationDocument);
  const invitations = data?.organizationInvitations ?? [];
  return (
    <Page title={t('nav.orgInvitations')}>
      <p>
        <Link to="/app/org/members">{t('org.inviteFromMembers')}</Link>
      </p>
      <Card title={t('org.invitationsTitle', { name: organization.name })}>
        <ProblemText problem={describeError(revokeState.error)} />
        {!data && fetching ? (
          <Loading />
        ) : !invitations.length ? (
          <Empty>{t('org.noInvitations')}</Empty>
        ) : (
          <div className="table-wrap">
            <p className="hint">{count('openInvitation', invitations.filter((i) => statusOf(i.status) === 'open').length)}</p>
            <table className="table" data-testid="invitations">
              <TableHead columns={[t('auth.email'), t('org.role'), t('org.status'), t('org.sent'), t('org.expires')]} actions />
              <tbody>
                {invitations.map((invitation) => (
                  <tr key={invitation.id} data-invitation-id={invitation.id}>
                    <td>{invitation.email}</td>
                    <td>{roleName(t, invitation.role)}</td>
                    <td>
                      <StatusBadge status={statusOf(invitation.status)} />
                    </td>
                    <td>{formatDate(invitation.createdAt)}</td>
                    <td>{formatDate(invitation.expiresAt)}</td>
                    <td>
                      {statusOf(invitation.status) === 'open' && (
                        <Button
                          kind="danger"
                          aria-label={t('org.revokeInvitationNamed', { email: invitation.email })}
                          onClick={async () => {
                            if (!confirm(t('org.revokeInvitationConfirm', { email: invitation.email }))) return;
                            await revoke({ organizationId, invitationId: invitation.id });
                            refetch({ requestPolicy: 'network-only' });
                          }}
                        >
                          {t('keys.revoke')}
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </Page>
  );
}

function StatusBadge({ status }: { status: string }) {
  const { t } = useI18n();
  return <Badge tone={isStatus(status) ? TONES[status] : 'neutral'}>{isStatus(status) ? t(`org.invitation.${status}`) : status}</Badge>;
}
