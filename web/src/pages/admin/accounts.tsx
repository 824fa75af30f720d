import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../../client.js';
import { graphql } from '../../gql/index.js';
import type { AdminAccountsQuery } from '../../gql/graphql.js';
import { useI18n } from '../../i18n.js';
import { Badge, Button, Card, Empty, Field, Loading, Money, Notice, Page, ProblemText, TableHead } from '../../ui.js';

const AdminAccountsDocument = graphql(`
  query AdminAccounts($search: String) {
    adminAccounts(search: $search, limit: 50) {
      userId
      username
      email
      emailVerified
      isAdmin
      balanceUsd
      paidBalanceUsd
      bonusBalanceUsd
      creditLimitUsd
      trustedPartnerUntil
      concurrencyLimit
      activeKeys
      activeSessions
      createdAt
    }
  }
`);
const AdminKeysDocument = graphql(`
  query AdminAccountKeys($userId: ID!) {
    adminAccountKeys(userId: $userId) {
      id
      label
      providerFamily
      routeGroup
      monthlySpendCap
      rpmLimit
      concurrencyLimit
      revokedAt
    }
  }
`);
const AdjustDocument = graphql(`
  mutation AdjustBalance($input: AdjustBalanceInput!) {
    adjustBalance(input: $input) {
      transactionId
      amountUsd
      applied
    }
  }
`);
const TrustedDocument = graphql(`
  mutation SetTrustedPartner($input: TrustedPartnerInput!) {
    setTrustedPartner(input: $input) {
      userId
    }
  }
`);
const RevokeTrustedDocument = graphql(`
  mutation RevokeTrustedPartner($userId: ID!) {
    revokeTrustedPartner(userId: $userId) {
      userId
    }
  }
`);
const EndSessionsDocument = graphql(`
  mutation EndSessions($userId: ID!) {
    endSessions(userId: $userId)
  }
`);
const KeyLimitsDocument = graphql(`
  mutation SetKeyLimits($input: KeyLimitsInput!) {
    setKeyLimits(input: $input) {
      keyId
    }
  }
`);

type AdminAccount = AdminAccountsQuery['adminAccounts'][number];

export function AdminAccounts() {
  const { t, formatDate } = useI18n();
  const [draft, setDraft] = useState('');
  const [search, setSearch] = useState('');
  const [{ data, fetching }, refetch] = useQuery({ query: AdminAccountsDocument, variables: { search: search || null }, requestPolicy: 'network-only' });
  const [openId, setOpenId] = useState<string | null>(null);
  const open = data?.adminAccounts.find((a) => a.userId === openId) ?? null;
  return (
    <Page title={t('nav.adminAccounts')}>
      <Card>
        <form className="row" role="search" onSubmit={(e) => { e.preventDefault(); setSearch(draft.trim()); }}>
          <Field label={t('admin.searchAccounts')} type="search" value={draft} onChange={(e) => setDraft(e.target.value)} />
          <Button type="submit">{t('admin.search')}</Button>
        </form>
      </Card>
      {!data && fetching ? (
        <Loading />
      ) : !data?.adminAccounts.length ? (
        <Empty>{t('admin.noAccounts')}</Empty>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="admin-accounts">
            <TableHead columns={[t('auth.username'), t('auth.email'), t('dash.balance'), t('admin.keys'), t('admin.sessions'), t('keys.created')]} />
            <tbody>
              {data.adminAccounts.map((account) => (
                <tr key={account.userId} data-account={account.username ?? account.userId}>
                  <th scope="row">
                    <Button kind="link" onClick={() => setOpenId(account.userId)} aria-expanded={openId === account.userId}>
                      {account.username ?? account.userId}
                    </Button>{' '}
                    {account.isAdmin && <Badge tone="neutral">{t('admin.admin')}</Badge>}
                  </th>
                  <td>
                    {account.email ?? '—'} {account.email && !account.emailVerified && <Badge tone="warn">{t('profile.notVerified')}</Badge>}
                  </td>
                  <td>
                    <Money usd={account.balanceUsd} />
                  </td>
                  <td>{account.activeKeys}</td>
                  <td>{account.activeSessions}</td>
                  <td>{formatDate(account.createdAt, false)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <AccountPanel key={open.userId} account={open} onChanged={() => refetch({ requestPolicy: 'network-only' })} />}
    </Page>
  );
}

function AccountPanel({ account, onChanged }: { account: AdminAccount; onChanged(): void }) {
  const { t, count } = useI18n();
  const [adjustState, adjust] = useMutation(AdjustDocument);
  const [trustedState, setTrusted] = useMutation(TrustedDocument);
  const [, revokeTrusted] = useMutation(RevokeTrustedDocument);
  const [endState, endSessions] = useMutation(EndSessionsDocument);
  const [adjustForm, setAdjustForm] = useState({ amountUsd: '', reason: '' });
  const [trustForm, setTrustForm] = useState({ creditLimitUsd: '', validUntil: '' });
  const [done, setDone] = useState<string | null>(null);
  // One idempotency key per adjustment form: a double click or a retry credits once.
  const [idempotencyKey, setIdempotencyKey] = useState(() => crypto.randomUUID());

  const submitAdjust = async (event: FormEvent) => {
    event.preventDefault();
    const result = await adjust({ input: { userId: account.userId, amountUsd: adjustForm.amountUsd.trim(), reason: adjustForm.reason.trim(), idempotencyKey } });
    if (result.data) {
      setDone(t('admin.adjusted', { amount: result.data.adjustBalance.amountUsd }));
      setAdjustForm({ amountUsd: '', reason: '' });
      setIdempotencyKey(crypto.randomUUID());
      onChanged();
    }
  };
  const submitTrusted = async (event: FormEvent) => {
    event.preventDefault();
    const result = await setTrusted({ input: { userId: account.userId, creditLimitUsd: trustForm.creditLimitUsd.trim(), validUntil: trustForm.validUntil ? new Date(trustForm.validUntil).toISOString() : '' } });
    if (result.data) onChanged();
  };
  const adjustProblem = describeError(adjustState.error);
  const trustProblem = describeError(trustedState.error);

  return (
    <Card title={t('admin.accountTitle', { name: account.username ?? account.email ?? account.userId })} className="highlight">
      <AccountFacts account={account} />
      {done && <Notice kind="success">{done}</Notice>}
      <div className="grid two">
        <form onSubmit={submitAdjust} noValidate>
          <h3>{t('admin.adjustTitle')}</h3>
          <ProblemText problem={adjustProblem} />
          <Field label={t('admin.amount')} inputMode="decimal" placeholder="-5.00 / 10.00" value={adjustForm.amountUsd} onChange={(e) => setAdjustForm({ ...adjustForm, amountUsd: e.target.value })} error={adjustProblem?.fields.amountUsd} hint={t('admin.amountHint')} />
          <Field label={t('admin.reason')} value={adjustForm.reason} maxLength={500} onChange={(e) => setAdjustForm({ ...adjustForm, reason: e.target.value })} error={adjustProblem?.fields.reason} />
          <Button type="submit" busy={adjustState.fetching}>
            {t('admin.adjust')}
          </Button>
        </form>
        <form onSubmit={submitTrusted} noValidate>
          <h3>{t('admin.trustedTitle')}</h3>
          <ProblemText problem={trustProblem} />
          <Field label={t('admin.creditLimit')} inputMode="decimal" value={trustForm.creditLimitUsd} onChange={(e) => setTrustForm({ ...trustForm, creditLimitUsd: e.target.value })} error={trustProblem?.fields.creditLimitUsd} />
          <Field label={t('admin.validUntil')} type="datetime-local" value={trustForm.validUntil} onChange={(e) => setTrustForm({ ...trustForm, validUntil: e.target.value })} error={trustProblem?.fields.validUntil} />
          <div className="row">
            <Button type="submit" busy={trustedState.fetching}>
              {t('admin.grant')}
            </Button>
            <Button kind="secondary" onClick={async () => { await revokeTrusted({ userId: account.userId }); onChanged(); }}>
              {t('admin.revokeCredit')}
            </Button>
          </div>
        </form>
      </div>
      <p className="row">
        <Button kind="danger" busy={endState.fetching} onClick={async () => { const r = await endSessions({ userId: account.userId }); if (r.data) { setDone(t('admin.sessionsEnded', { sessions: count('session', r.data.endSessions) })); onChanged(); } }}>
          {t('admin.endSessions')}
        </Button>
      </p>
      <AccountKeys userId={account.userId} />
    </Card>
  );
}

/** The account's id, balances and trusted-partner credit line. */
function AccountFacts({ account }: { account: AdminAccount }) {
  const { t, formatDate } = useI18n();
  return (
    <dl className="facts">
      <dt>ID</dt>
      <dd>
        <code>{account.userId}</code>
      </dd>
      <dt>{t('dash.paid')}</dt>
      <dd>
        <Money usd={account.paidBalanceUsd} />
      </dd>
      <dt>{t('dash.bonus')}</dt>
      <dd>
        <Money usd={account.bonusBalanceUsd} />
      </dd>
      <dt>{t('admin.creditLine')}</dt>
      <dd>
        <Money usd={account.creditLimitUsd} /> {account.trustedPartnerUntil ? t('admin.until', { date: formatDate(account.trustedPartnerUntil) }) : ''}
      </dd>
    </dl>
  );
}

function AccountKeys({ userId }: { userId: string }) {
  const { t } = useI18n();
  const [{ data }, refetch] = useQuery({ query: AdminKeysDocument, variables: { userId }, requestPolicy: 'network-only' });
  const [state, setLimits] = useMutation(KeyLimitsDocument);
  const [editing, setEditing] = useState<{ keyId: string; rpmLimit: string; concurrencyLimit: string; monthlySpendCap: string } | null>(null);
  const problem = describeError(state.error);
  const optionalInt = (value: string) => (value.trim() === '' ? null : Number(value));
  return (
    <>
      <h3>{t('admin.keys')}</h3>
      {!data?.adminAccountKeys.length ? (
        <Empty>{t('keys.none')}</Empty>
      ) : (
        <div className="table-wrap">
          <table className="table compact">
            <TableHead columns={[t('keys.label'), t('keys.group'), t('admin.rpm'), t('admin.concurrency'), t('keys.monthCap')]} actions />
            <tbody>
              {data.adminAccountKeys.map((key) => (
                <tr key={key.id}>
                  <td>
                    {key.label ?? key.id} {key.revokedAt && <Badge tone="bad">{t('admin.revoked')}</Badge>}
                  </td>
                  <td>
                    {key.providerFamily} / {key.routeGroup}
                  </td>
                  <td>{key.rpmLimit ?? t('admin.default')}</td>
                  <td>{key.concurrencyLimit ?? t('admin.default')}</td>
                  <td>{key.monthlySpendCap ? <Money usd={key.monthlySpendCap} /> : t('keys.noCap')}</td>
                  <td>
                    {!key.revokedAt && (
                      <Button kind="secondary" onClick={() => setEditing({ keyId: key.id, rpmLimit: String(key.rpmLimit ?? ''), concurrencyLimit: String(key.concurrencyLimit ?? ''), monthlySpendCap: key.monthlySpendCap ?? '' })}>
                        {t('admin.editLimits')}
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && (
        <form
          className="form-grid"
          noValidate
          onSubmit={async (event) => {
            event.preventDefault();
            const result = await setLimits({ input: { keyId: editing.keyId, rpmLimit: optionalInt(editing.rpmLimit), concurrencyLimit: optionalInt(editing.concurrencyLimit), monthlySpendCap: editing.monthlySpendCap.trim() || null } });
            if (result.data) {
              setEditing(null);
              refetch({ requestPolicy: 'network-only' });
            }
          }}
        >
          <ProblemText problem={problem} />
          <Field label={t('admin.rpm')} inputMode="numeric" value={editing.rpmLimit} onChange={(e) => setEditing({ ...editing, rpmLimit: e.target.value })} error={problem?.fields.rpmLimit} hint={t('admin.emptyDefault')} />
          <Field label={t('admin.concurrency')} inputMode="numeric" value={editing.concurrencyLimit} onChange={(e) => setEditing({ ...editing, concurrencyLimit: e.target.value })} error={problem?.fields.concurrencyLimit} />
          <Field label={t('keys.monthCap')} inputMode="decimal" value={editing.monthlySpendCap} onChange={(e) => setEditing({ ...editing, monthlySpendCap: e.target.value })} error={problem?.fields.monthlySpendCap} />
          <div className="row">
            <Button type="submit" busy={state.fetching}>
              {t('common.save')}
            </Button>
            <Button kind="secondary" onClick={() => setEditing(null)}>
              {t('common.cancel')}
            </Button>
          </div>
        </form>
      )}
    </>
  );
}
