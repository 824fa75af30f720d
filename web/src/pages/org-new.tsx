import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { useOrganization } from '../organization.js';
import { Link, navigate } from '../router.js';
import { useSession } from '../session.js';
import { Button, Field, Notice, Page, ProblemText } from '../ui.js';

const CreateOrganizationDocument = graphql(`
  mutation CreateOrganization($input: CreateOrganizationInput!) {
    createOrganization(input: $input) {
      id
      name
    }
  }
`);

/** Founds an organization (a verified e-mail is needed) and switches the cabinet to it, on its members page. */
export function CreateOrganization() {
  const { t } = useI18n();
  const { account } = useSession();
  const { refresh, select } = useOrganization();
  const [state, create] = useMutation(CreateOrganizationDocument);
  const [name, setName] = useState('');
  const problem = describeError(state.error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const result = await create({ input: { name: name.trim() } });
    if (!result.data) return;
    await refresh();
    select(result.data.createOrganization.id);
    navigate('/app/org/members');
  };
  return (
    <Page title={t('nav.orgCreate')}>
      <form className="card narrow" onSubmit={submit} noValidate>
        <p>{t('org.createIntro')}</p>
        {account && !account.emailVerified && (
          <Notice kind="warning">
            {t('org.verifyFirst')} <Link to="/app/profile">{t('auth.verifyNow')}</Link>
          </Notice>
        )}
        <ProblemText problem={problem} />
        <Field label={t('org.name')} value={name} maxLength={100} required onChange={(e) => setName(e.target.value)} error={problem?.fields.name} />
        <Button type="submit" busy={state.fetching}>
          {t('org.createButton')}
        </Button>
      </form>
    </Page>
  );
}
