import { useMutation, useQuery } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { useOrganization } from '../organization.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Button, Card, Loading, Notice, Page, ProblemText } from '../ui.js';
import { roleName } from './org-common.js';

const InvitationPreviewDocument = graphql(`
  query InvitationPreview($token: String!) {
    invitationPreview(token: $token) {
      organizationName
      email
      role
      expiresAt
    }
  }
`);
const AcceptInvitationDocument = graphql(`
  mutation AcceptInvitation($token: String!) {
    acceptInvitation(token: $token) {
      id
      name
    }
  }
`);

/**
 * The link an invitation e-mail carries (/app/invite?token=...): what it offers (no sign-in needed), then sign in or
 * sign up and come back here (the forms return to `next`), then accept: the cabinet switches to the organization.
 */
export function Invite() {
  const { t, formatDate } = useI18n();
  const { query } = useLocation();
  const token = query.get('token') ?? '';
  const { account } = useSession();
  const [{ data, fetching, error }] = useQuery({ query: InvitationPreviewDocument, variables: { token }, pause: !token });
  const preview = data?.invitationPreview;
  const here = `/app/invite?token=${encodeURIComponent(token)}`;
  return (
    <Page title={t('nav.invite')}>
      {!token || (error && !fetching) ? (
        <Notice kind="warning">{t('org.invitationInvalid')}</Notice>
      ) : !preview ? (
        <Loading />
      ) : (
        <Card className="narrow">
          <p data-testid="invitation">{t('org.invitationText', { name: preview.organizationName, role: roleName(t, preview.role) })}</p>
          <p className="hint">{t('org.invitationFor', { email: preview.email, date: formatDate(preview.expiresAt) })}</p>
          {account ? (
            <Accept token={token} />
          ) : (
            <>
              <p>{t('org.signInToAccept')}</p>
              <p className="row">
                <Link className="button primary" to={`/app/sign-up?next=${encodeURIComponent(here)}&email=${encodeURIComponent(preview.email)}`}>
                  {t('auth.signUp')}
                </Link>
                <Link className="button secondary" to={`/app/sign-in?next=${encodeURIComponent(here)}`}>
                  {t('auth.signIn')}
                </Link>
              </p>
            </>
          )}
        </Card>
      )}
    </Page>
  );
}

function Accept({ token }: { token: string }) {
  const { t } = useI18n();
  const { account } = useSession();
  const { refresh, select } = useOrganization();
  const [state, accept] = useMutation(AcceptInvitationDocument);
  return (
    <>
      <p>{t('org.acceptAs', { name: account?.username ?? account?.email ?? '' })}</p>
      <ProblemText problem={describeError(state.error)} />
      <Button
        busy={state.fetching}
        onClick={async () => {
          const result = await accept({ token });
          if (!result.data) return;
          await refresh();
          select(result.data.acceptInvitation.id);
          navigate('/app/dashboard');
        }}
      >
        {t('org.accept')}
      </Button>
    </>
  );
}
