import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { may, type Organization } from '../organization.js';
import { useSession } from '../session.js';
import { Card, Empty, Loading, Page } from '../ui.js';
import { KeyCreation, KeyList, useKeyAlerts } from './keys.js';

const OrganizationKeysDocument = graphql(`
  query OrganizationKeys($organizationId: ID!) {
    organizationKeys(organizationId: $organizationId) {
      id
      label
      providerFamily
      routeGroup
      monthlySpendCap
      createdAt
      lastUsed
      createdBy
    }
    organizationMembers(organizationId: $organizationId) {
      userId
      name
    }
    catalogModels {
      id
      family
      groups {
        id
        label
      }
    }
  }
`);
const CreateOrganizationKeyDocument = graphql(`
  mutation CreateOrganizationKey($organizationId: ID!, $input: CreateKeyInput!) {
    createOrganizationKey(organizationId: $organizationId, input: $input) {
      id
      key
      label
      providerFamily
      routeGroup
      pricingPlan
      monthlySpendCap
      createdAt
    }
  }
`);
const RevokeOrganizationKeyDocument = graphql(`
  mutation RevokeOrganizationKey($organizationId: ID!, $keyId: ID!) {
    revokeOrganizationKey(organizationId: $organizationId, keyId: $keyId)
  }
`);

/**
 * An organization's keys: owners and admins see and revoke every key, the others their own (the server lists only
 * those). Each key names the member who made it; a key is spent from the organization's balance within the
 * member's and the organization's monthly caps.
 */
export function OrganizationKeys({ organization }: { organization: Organization }) {
  const { t } = useI18n();
  const { account } = useSession();
  const organizationId = organization.id;
  const [{ data, fetching }, refetch] = useQuery({ query: OrganizationKeysDocument, variables: { organizationId } });
  const [createState, create] = useMutation(CreateOrganizationKeyDocument);
  const [, revoke] = useMutation(RevokeOrganizationKeyDocument);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const alerts = useKeyAlerts(reload, organizationId);
  const names = new Map((data?.organizationMembers ?? []).map((m) => [m.userId, m.name]));
  const manager = may(organization.role, 'manageKeys');
  return (
    <Page title={t('nav.keys')}>
      <p className="hint">{t('org.keysIntro', { name: organization.name })}</p>
      <KeyCreation
        models={data?.catalogModels ?? []}
        state={createState}
        create={async (input) => {
          const result = await create({ organizationId, input });
          if (result.data) reload();
          return result.data?.createOrganizationKey;
        }}
      />
      <Card title={t('org.keysTitle')}>
        {!data && fetching ? (
          <Loading />
        ) : !data?.organizationKeys.length ? (
          <Empty>{t('keys.none')}</Empty>
        ) : (
          <KeyList
            keys={data.organizationKeys}
            alerts={alerts}
            memberOf={(key) => {
              const by = (key as { createdBy?: string | null }).createdBy;
              return by ? (names.get(by) ?? t('org.formerMember')) : '—';
            }}
            mayRevoke={(key) => manager || (key as { createdBy?: string | null }).createdBy === account?.userId}
            onRevoke={async (keyId) => {
              await revoke({ organizationId, keyId });
              reload();
            }}
          />
        )}
      </Card>
    </Page>
  );
}
