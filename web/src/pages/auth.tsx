import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { describeError, restartSubscriptions } from '../client.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { Link, navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { Button, Field, Page, ProblemText } from '../ui.js';

const LoginDocument = graphql(`
  mutation Login($input: LoginInput!) {
    login(input: $input) {
      account {
        userId
      }
    }
  }
`);

const RegisterDocument = graphql(`
  mutation Register($input: RegisterInput!) {
    register(input: $input) {
      account {
        userId
      }
    }
  }
`);

/**
 * Where a form returns after signing in or up: the `next` query parameter when it is a cabinet path (an invitation
 * link sends its visitor through sign-up and back), never another site.
 */
export function nextPath(query: URLSearchParams): string | null {
  const next = query.get('next');
  return next && next.startsWith('/app/') && !next.startsWith('//') ? next : null;
}

/** A link to the other form that keeps `next`. */
function withNext(path: string, query: URLSearchParams): string {
  const next = nextPath(query);
  return next ? `${path}?next=${encodeURIComponent(next)}` : path;
}

export function SignIn() {
  const { t } = useI18n();
  const { query } = useLocation();
  const { refresh } = useSession();
  const [{ fetching, error }, login] = useMutation(LoginDocument);
  const [form, setForm] = useState({ login: '', password: '' });
  const problem = describeError(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await login({ input: form });
    if (result.data) {
      restartSubscriptions();
      await refresh();
      navigate(nextPath(query) ?? '/app/dashboard');
    }
  };
  return (
    <Page title={t('auth.signIn')}>
      <form className="card narrow" onSubmit={submit} noValidate>
        <ProblemText problem={problem} />
        <Field label={t('auth.login')} autoComplete="username" required value={form.login} onChange={(e) => setForm({ ...form, login: e.target.value })} error={problem?.fields.login} />
        <Field label={t('auth.password')} type="password" autoComplete="current-password" required value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} error={problem?.fields.password} />
        <Button type="submit" busy={fetching}>
          {t('auth.signIn')}
        </Button>
        <p>
          {t('auth.noAccount')} <Link to={withNext('/app/sign-up', query)}>{t('auth.signUp')}</Link>
        </p>
      </form>
    </Page>
  );
}

export function SignUp() {
  const { t } = useI18n();
  const { query } = useLocation();
  const { refresh } = useSession();
  const [{ fetching, error }, register] = useMutation(RegisterDocument);
  const [form, setForm] = useState({ username: '', email: query.get('email') ?? '', password: '' });
  const problem = describeError(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await register({ input: form });
    if (result.data) {
      restartSubscriptions();
      await refresh();
      navigate(nextPath(query) ?? '/app/profile');
    }
  };
  return (
    <Page title={t('auth.signUp')}>
      <form className="card narrow" onSubmit={submit} noValidate>
        <ProblemText problem={problem} />
        <Field label={t('auth.username')} autoComplete="username" required value={form.username} onChange={(e) => setForm({ ...form, username: e.target.value })} error={problem?.fields.username} />
        <Field label={t('auth.email')} type="email" autoComplete="email" required value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} error={problem?.fields.email} />
        <Field label={t('auth.password')} type="password" autoComplete="new-password" required minLength={8} value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} error={problem?.fields.password} hint={t('auth.passwordHint')} />
        <Button type="submit" busy={fetching}>
          {t('auth.createAccount')}
        </Button>
        <p>
          {t('auth.haveAccount')} <Link to={withNext('/app/sign-in', query)}>{t('auth.signIn')}</Link>
        </p>
      </form>
    </Page>
  );
}
