import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { describeError, restartSubscriptions } from '../client.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { Link, navigate } from '../router.js';
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

export function SignIn() {
  const { t } = useI18n();
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
      navigate('/app/dashboard');
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
          {t('auth.noAccount')} <Link to="/app/sign-up">{t('auth.signUp')}</Link>
        </p>
      </form>
    </Page>
  );
}

export function SignUp() {
  const { t } = useI18n();
  const { refresh } = useSession();
  const [{ fetching, error }, register] = useMutation(RegisterDocument);
  const [form, setForm] = useState({ username: '', email: '', password: '' });
  const problem = describeError(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await register({ input: form });
    if (result.data) {
      restartSubscriptions();
      await refresh();
      navigate('/app/profile');
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
          {t('auth.haveAccount')} <Link to="/app/sign-in">{t('auth.signIn')}</Link>
        </p>
      </form>
    </Page>
  );
}
