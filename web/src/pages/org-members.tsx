import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import type { OrganizationMembersQuery, OrganizationRole } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { useOnReconnect, useThrottled } from '../live.js';
import { may, useOrganization, type Organization } from '../organization.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { Badge, Button, Card, Field, Loading, Money, Notice, Page, ProblemText, SelectField, TableHead } from '../ui.js';
import { GRANTABLE, OrganizationMembersDocument, OrganizationOnly, roleName } from './org-common.js';

const MembersUsageDocument = graphql(`
  subscription MembersUsage($organizationId: ID) {
    usageRecorded(organizationId: $organizationId) {
      events {
        id
      }
    }
  }
`);
const UpdateOrganizationDocument = graphql(`
  mutation UpdateOrganization($input: UpdateOrganizationInput!) {
    updateOrganization(input: $input) {
      id
      name
      monthlySpendCap
    }
  }
`);
const InviteMemberDocument = graphql(`
  mutation InviteMember($input: InviteMemberInput!) {
    inviteMember(input: $input) {
      id
      email
      status
    }
  }
`);
const UpdateMemberDocument = graphql(`
  mutation UpdateMember($input: UpdateMemberInput!) {
    updateMember(input: $input) {
      userId
      role
      monthlySpendCap
    }
  }
`);
const RemoveMemberDocument = graphql(`
  mutation RemoveMember($organizationId: ID!, $userId: ID!) {
    removeMember(organizationId: $organizationId, userId: $userId)
  }
`);
const LeaveOrganizationDocument = graphql(`
  mutation LeaveOrganization($organizationId: ID!) {
    leaveOrganization(organizationId: $organizationId)
  }
`);
const TransferOwnershipDocument = graphql(`
  mutation TransferOwnership($organizationId: ID!, $userId: ID!) {
    transferOwnership(organizationId: $organizationId, userId: $userId) {
      id
      role
      ownerId
    }
  }
`);

type Member = OrganizationMembersQuery['organizationMembers'][number];

export function OrganizationMembers() {
  return <OrganizationOnly title="nav.orgMembers" page={MembersPage} />;
}

/**
 * The organization's members with their roles, caps and this month's spend; the managers' forms (settings,
 * invitation, a member's role and cap, removal), the owner's transfer, and leaving. The spend stays live: every
 * billed batch of the organization reads the list again (at most twice a second), as does a socket (re)connect.
 */
function MembersPage({ organization }: { organization: Organization }) {
  const { t } = useI18n();
  const organizationId = organization.id;
  const [{ data, fetching }, refetch] = useQuery({ query: OrganizationMembersDocument, variables: { organizationId } });
  const reload = useThrottled(() => refetch({ requestPolicy: 'network-only' }));
  useOnReconnect(reload);
  useSubscription({ query: MembersUsageDocument, variables: { organizationId } }, (_, event) => (reload(), event));
  const [editing, setEditing] = useState<Member | null>(null);
  const manager = may(organization.role, 'manageMembers');
  return (
    <Page title={t('nav.orgMembers')}>
      {manager ? <SettingsForm organization={data?.organization ?? organization} /> : <MyStanding organization={organization} />}
      {manager && <InviteForm organizationId={organizationId} />}
      <Card title={t('org.membersTitle', { name: organization.name })}>
        {!data && fetching ? <Loading /> : <MemberTable organization={organization} members={data?.organizationMembers ?? []} onEdit={setEditing} reload={reload} />}
      </Card>
      {editing && <MemberEditor key={editing.userId} organizationId={organizationId} member={editing} onDone={() => (setEditing(null), reload())} />}
      {organization.role !== 'OWNER' && <LeaveButton organization={organization} />}
    </Page>
  );
}

/** A plain member's view of their own standing: role and caps. */
function MyStanding({ organization }: { organization: Organization }) {
  const { t } = useI18n();
  return (
    <Card title={organization.name}>
      <dl className="facts">
        <dt>{t('org.yourRole')}</dt>
        <dd>{roleName(t, organization.role)}</dd>
        <dt>{t('org.orgCap')}</dt>
        <dd>{organization.monthlySpendCap ? <Money usd={organization.monthlySpendCap} /> : t('keys.noCap')}</dd>
        <dt>{t('org.yourCap')}</dt>
        <dd>{organization.myMonthlySpendCap ? <Money usd={organization.myMonthlySpendCap} /> : t('keys.noCap')}</dd>
      </dl>
    </Card>
  );
}

/** The organization's name and monthly cap (owner, admin); an empty cap removes it. */
function SettingsForm({ organization }: { organization: Pick<Organization, 'id' | 'name' | 'monthlySpendCap'> }) {
  const { t } = useI18n();
  const { refresh } = useOrganization();
  const [state, update] = useMutation(UpdateOrganizationDocument);
  const [form, setForm] = useState({ name: organization.name, monthlySpendCap: organization.monthlySpendCap ?? '' });
  const [saved, setSaved] = useState(false);
  const problem = describeError(state.error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const result = await update({ input: { organizationId: organization.id, name: form.name, monthlySpendCap: form.monthlySpendCap.trim() || null } });
    if (result.data) {
      setSaved(true);
      await refresh();
    }
  };
  return (
    <Card title={t('org.settings')}>
      <form className="form-grid" onSubmit={submit} noValidate>
        <ProblemText problem={problem} />
        {saved && <Notice kind="success">{t('org.saved')}</Notice>}
        <Field label={t('org.name')} value={form.name} maxLength={100} onChange={(e) => setForm({ ...form, name: e.target.value })} error={problem?.fields.name} />
        <Field label={t('org.orgCapField')} inputMode="decimal" placeholder="500.00" value={form.monthlySpendCap} onChange={(e) => setForm({ ...form, monthlySpendCap: e.target.value })} error={problem?.fields.monthlySpendCap} hint={t('org.orgCapHint')} />
        <Button type="submit" busy={state.fetching}>
          {t('common.save')}
        </Button>
      </form>
    </Card>
  );
}

/** Invites an address with a role; the link goes by e-mail in the page's language. */
function InviteForm({ organizationId }: { organizationId: string }) {
  const { t, language } = useI18n();
  const [state, invite] = useMutation(InviteMemberDocument);
  const [form, setForm] = useState<{ email: string; role: OrganizationRole }>({ email: '', role: 'MEMBER' });
  const [sent, setSent] = useState<string | null>(null);
  const problem = describeError(state.error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSent(null);
    const result = await invite({ input: { organizationId, email: form.email.trim(), role: form.role, language } });
    if (result.data) {
      setSent(result.data.inviteMember.email);
      setForm({ ...form, email: '' });
    }
  };
  return (
    <Card title={t('org.invite')}>
      <form className="form-grid" onSubmit={submit} noValidate>
        <ProblemText problem={problem} />
        {sent && <Notice kind="success">{t('org.invited', { email: sent })}</Notice>}
        <Field label={t('auth.email')} type="email" autoComplete="off" value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} error={problem?.fields.email} />
        <SelectField label={t('org.role')} value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as OrganizationRole })} options={GRANTABLE.map((role) => ({ value: role, label: roleName(t, role) }))} error={problem?.fields.role} />
        <Button type="submit" busy={state.fetching}>
          {t('org.sendInvite')}
        </Button>
      </form>
    </Card>
  );
}

interface MemberTableProps {
  organization: Organization;
  members: Member[];
  onEdit(member: Member): void;
  reload(): void;
}

function MemberTable({ organization, members, onEdit, reload }: MemberTableProps) {
  const { t, formatDate, count } = useI18n();
  const { account } = useSession();
  const { refresh } = useOrganization();
  const [, remove] = useMutation(RemoveMemberDocument);
  const [transferState, transfer] = useMutation(TransferOwnershipDocument);
  const manager = may(organization.role, 'manageMembers');
  const owner = may(organization.role, 'transferOwnership');
  const problem = describeError(transferState.error);
  return (
    <div className="table-wrap">
      <ProblemText problem={problem} />
      <p className="hint" data-testid="member-count">{count('member', members.length)}</p>
      <table className="table" data-testid="members">
        <TableHead columns={[t('org.member'), t('auth.email'), t('org.role'), t('org.memberCap'), t('org.monthSpent'), t('org.joined')]} actions={manager} />
        <tbody>
          {members.map((member) => {
            const others = member.role !== 'OWNER' && member.userId !== account?.userId;
            return (
              <tr key={member.userId} data-user-id={member.userId}>
                <td>{member.name}</td>
                <td>{member.email ?? '—'}</td>
                <td>
                  <Badge tone={member.role === 'OWNER' ? 'good' : 'neutral'}>{roleName(t, member.role)}</Badge>
                </td>
                <td>{member.monthlySpendCap ? <Money usd={member.monthlySpendCap} /> : t('keys.noCap')}</td>
                <td data-testid="month-spent">{member.monthSpent === null ? '—' : <Money usd={member.monthSpent} />}</td>
                <td>{formatDate(member.joinedAt, false)}</td>
                {manager && (
                  <td className="row">
                    <Button kind="secondary" aria-label={t('org.editNamed', { name: member.name })} onClick={() => onEdit(member)}>
                      {t('org.edit')}
                    </Button>
                    {others && (
                      <Button
                        kind="danger"
                        aria-label={t('org.removeNamed', { name: member.name })}
                        onClick={async () => {
                          if (!confirm(t('org.removeConfirm', { name: member.name }))) return;
                          await remove({ organizationId: organization.id, userId: member.userId });
                          reload();
                        }}
                      >
                        {t('org.remove')}
                      </Button>
                    )}
                    {owner && others && (
                      <Button
                        kind="secondary"
                        aria-label={t('org.transferNamed', { name: member.name })}
                        onClick={async () => {
                          if (!confirm(t('org.transferConfirm', { name: member.name }))) return;
                          const result = await transfer({ organizationId: organization.id, userId: member.userId });
                          if (result.data) await refresh();
                          reload();
                        }}
                      >
                        {t('org.transfer')}
                      </Button>
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** One member's role (never the owner's: that moves by a transfer) and monthly cap; an empty cap removes it. */
function MemberEditor({ organizationId, member, onDone }: { organizationId: string; member: Member; onDone(): void }) {
  const { t } = useI18n();
  const [state, update] = useMutation(UpdateMemberDocument);
  const [form, setForm] = useState({ role: member.role, monthlySpendCap: member.monthlySpendCap ?? '' });
  const problem = describeError(state.error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const input = {
      organizationId,
      userId: member.userId,
      monthlySpendCap: form.monthlySpendCap.trim() || null,
      ...(member.role !== 'OWNER' && form.role !== member.role ? { role: form.role } : {}),
    };
    if ((await update({ input })).data) onDone();
  };
  return (
    <Card title={t('org.editTitle', { name: member.name })}>
      <form className="form-grid" onSubmit={submit} noValidate>
        <ProblemText problem={problem} />
        {member.role !== 'OWNER' && (
          <SelectField label={t('org.role')} value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as OrganizationRole })} options={GRANTABLE.map((role) => ({ value: role, label: roleName(t, role) }))} error={problem?.fields.role} />
        )}
        <Field label={t('org.memberCapField')} inputMode="decimal" placeholder="50.00" value={form.monthlySpendCap} onChange={(e) => setForm({ ...form, monthlySpendCap: e.target.value })} error={problem?.fields.monthlySpendCap} hint={t('org.memberCapHint')} />
        <div className="row">
          <Button type="submit" busy={state.fetching}>
            {t('common.save')}
          </Button>
          <Button kind="secondary" onClick={onDone}>
            {t('common.cancel')}
          </Button>
        </div>
      </form>
    </Card>
  );
}

/** Leaves the organization (not the owner: they transfer first); the cabinet goes back to the personal account. */
function LeaveButton({ organization }: { organization: Organization }) {
  const { t } = useI18n();
  const { refresh, select } = useOrganization();
  const [state, leave] = useMutation(LeaveOrganizationDocument);
  return (
    <Card title={t('org.leaveTitle')}>
      <ProblemText problem={describeError(state.error)} />
      <Button
        kind="danger"
        busy={state.fetching}
        onClick={async () => {
          if (!confirm(t('org.leaveConfirm', { name: organization.name }))) return;
          if (!(await leave({ organizationId: organization.id })).data) return;
          select(null);
          await refresh();
          navigate('/app/dashboard');
        }}
      >
        {t('org.leave')}
      </Button>
    </Card>
  );
}
