import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { useSession } from '../session.js';
import { Button, Card, Field, Notice, Page, ProblemText } from '../ui.js';

const LinksDocument = graphql(`
  query IdentityLinks {
    identityLinks {
      email
      emailVerified
      hasPassword
      linked
      messengerLabel
    }
  }
`);
const VerifyDocument = graphql(`
  mutation VerifyEmail($code: String!) {
    verifyEmail(code: $code) {
      userId
      emailVerified
    }
  }
`);
const ResendDocument = graphql(`
  mutation ResendVerification($language: String) {
    resendVerification(language: $language) {
      ok
    }
  }
`);
const StartEmailLinkDocument = graphql(`
  mutation StartEmailLink($email: String!, $language: String) {
    startEmailLink(email: $email, language: $language) {
      ok
      expiresAt
    }
  }
`);
const ConfirmEmailLinkDocument = graphql(`
  mutation ConfirmEmailLink($email: String!, $code: String!, $password: String!) {
    confirmEmailLink(email: $email, code: $code, password: $password) {
      ok
      email
    }
  }
`);
const StartMessengerLinkDocument = graphql(`
  mutation StartMessengerLink {
    startMessengerLink {
      botUrl
      expiresAt
      token
    }
  }
`);
const UnlinkMessengerDocument = graphql(`
  mutation UnlinkMessenger {
    unlinkMessenger
  }
`);

/** The account: e-mail verification (code, resend), an e-mail for messenger-only accounts, the messenger link. */
export function Profile() {
  const { t, language } = useI18n();
  const { account, refresh } = useSession();
  const [links, refetchLinks] = useQuery({ query: LinksDocument });
  const [verifyState, verify] = useMutation(VerifyDocument);
  const [resendState, resend] = useMutation(ResendDocument);
  const [code, setCode] = useState('');
  const [resent, setResent] = useState(false);
  const info = links.data?.identityLinks;

  const submitCode = async (event: FormEvent) => {
    event.preventDefault();
    const result = await verify({ code: code.trim() });
    if (result.data) {
      void refresh();
      refetchLinks({ requestPolicy: 'network-only' });
    }
  };

  return (
    <Page title={t('nav.profile')}>
      <div className="grid two">
        <Card title={t('profile.account')}>
          <dl className="facts">
            <dt>{t('auth.username')}</dt>
            <dd>{account?.username ?? '—'}</dd>
            <dt>{t('auth.email')}</dt>
            <dd>
              {account?.email ?? '—'} {account?.email && (account.emailVerified ? `(${t('profile.verified')})` : `(${t('profile.notVerified')})`)}
            </dd>
          </dl>
        </Card>
        {account?.email && !account.emailVerified && (
          <Card title={t('profile.verifyTitle')}>
            <form onSubmit={submitCode} noValidate>
              <p>{t('profile.verifyText', { email: account.email })}</p>
              <ProblemText problem={describeError(verifyState.error)} />
              <Field label={t('profile.code')} inputMode="numeric" autoComplete="one-time-code" maxLength={6} value={code} onChange={(e) => setCode(e.target.value)} error={describeError(verifyState.error)?.fields.code} />
              <div className="row">
                <Button type="submit" busy={verifyState.fetching}>
                  {t('profile.verify')}
                </Button>
                <Button kind="secondary" busy={resendState.fetching} onClick={async () => { await resend({ language }); setResent(true); }}>
                  {t('profile.resend')}
                </Button>
              </div>
              {resent && <Notice>{t('profile.resent')}</Notice>}
            </form>
          </Card>
        )}
        {info && !info.email && <EmailLink onLinked={() => { void refresh(); refetchLinks({ requestPolicy: 'network-only' }); }} needsPassword={!info.hasPassword} />}
        {info && <MessengerLink linked={info.linked} label={info.messengerLabel ?? null} onChange={() => refetchLinks({ requestPolicy: 'network-only' })} />}
      </div>
    </Page>
  );
}

function EmailLink({ onLinked, needsPassword }: { onLinked(): void; needsPassword: boolean }) {
  const { t, language } = useI18n();
  const [startState, start] = useMutation(StartEmailLinkDocument);
  const [confirmState, confirm] = useMutation(ConfirmEmailLinkDocument);
  const [form, setForm] = useState({ email: '', code: '', password: '' });
  const sent = Boolean(startState.data);
  return (
    <Card title={t('profile.emailLinkTitle')}>
      <form
        noValidate
        onSubmit={async (event) => {
          event.preventDefault();
          if (!sent) await start({ email: form.email, language });
          else if ((await confirm(form)).data) onLinked();
        }}
      >
        <ProblemText problem={describeError(startState.error ?? confirmState.error)} />
        <Field label={t('auth.email')} type="email" value={form.email} readOnly={sent} onChange={(e) => setForm({ ...form, email: e.target.value })} />
        {sent && (
          <>
            <Field label={t('profile.code')} inputMode="numeric" value={form.code} onChange={(e) => setForm({ ...form, code: e.target.value })} />
            <Field label={needsPassword ? t('profile.newPassword') : t('auth.password')} type="password" value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} />
          </>
        )}
        <Button type="submit" busy={startState.fetching || confirmState.fetching}>
          {sent ? t('profile.confirm') : t('profile.sendCode')}
        </Button>
      </form>
    </Card>
  );
}

function MessengerLink({ linked, label, onChange }: { linked: boolean; label: string | null; onChange(): void }) {
  const { t } = useI18n();
  const [startState, start] = useMutation(StartMessengerLinkDocument);
  const [unlinkState, unlink] = useMutation(UnlinkMessengerDocument);
  const started = startState.data?.startMessengerLink;
  const problem = describeError(startState.error ?? unlinkState.error);
  return (
    <Card title={t('profile.messengerTitle')}>
      {problem?.reason === 'messenger_not_configured' ? (
        <p>{t('profile.messengerOff')}</p>
      ) : (
        <>
          <ProblemText problem={problem} />
          {linked ? (
            <>
              <p>{t('profile.messengerLinked', { name: label ?? '' })}</p>
              <Button kind="danger" busy={unlinkState.fetching} onClick={async () => { if ((await unlink({})).data) onChange(); }}>
                {t('profile.unlink')}
              </Button>
            </>
          ) : started ? (
            <p>
              {t('profile.messengerOpen')}{' '}
              <a href={started.botUrl} target="_blank" rel="noreferrer noopener">
                {started.botUrl}
              </a>
            </p>
          ) : (
            <Button kind="secondary" busy={startState.fetching} onClick={() => start({})}>
              {t('profile.link')}
            </Button>
          )}
        </>
      )}
    </Card>
  );
}
