import { useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import type { CombinedError } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import type { CreateKeyMutation, KeyEventType, KeysQuery } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { useOnReconnect } from '../live.js';
import { useOrganization } from '../organization.js';
import { useSession } from '../session.js';
import { OrganizationKeys } from './org-keys.js';
import { Badge, Button, Card, Code, CopyButton, Empty, Field, Loading, Money, Notice, Page, ProblemText, SelectField, TableHead } from '../ui.js';

const KeysDocument = graphql(`
  query Keys {
    keys {
      id
      label
      providerFamily
      routeGroup
      pricingPlan
      monthlySpendCap
      createdAt
      lastUsed
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
const CreateKeyDocument = graphql(`
  mutation CreateKey($input: CreateKeyInput!) {
    createKey(input: $input) {
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
// Keys created or revoked elsewhere (another tab, the API) and keys whose limits refuse requests.
const KeyEventsDocument = graphql(`
  subscription KeyEvents($organizationId: ID) {
    keyEvents(organizationId: $organizationId) {
      type
      keyId
      limit
      refused
      at
    }
  }
`);
const RevokeKeyDocument = graphql(`
  mutation RevokeKey($id: ID!) {
    revokeKey(id: $id)
  }
`);

export type CreatedApiKey = CreateKeyMutation['createKey'];
export type CreateKeyInputs = { providerFamily: string; routeGroup: string; label?: string; monthlySpendCap?: string };

/** Families and, per family, the groups its models are sold in: what a key may be scoped to. */
export function familiesAndGroups(models: { family: string; groups: { id: string; label: string }[] }[]): Map<string, Map<string, string>> {
  const families = new Map<string, Map<string, string>>();
  for (const model of models) {
    const groups = families.get(model.family) ?? new Map<string, string>();
    for (const group of model.groups) groups.set(group.id, group.label);
    families.set(model.family, groups);
  }
  return families;
}

export function Keys() {
  const { current, loading } = useOrganization();
  const { t } = useI18n();
  if (loading) return <Page title={t('nav.keys')}><Loading /></Page>;
  return current ? <OrganizationKeys key={current.id} organization={current} /> : <PersonalKeys />;
}

function PersonalKeys() {
  const { t } = useI18n();
  const [{ data, fetching }, refetch] = useQuery({ query: KeysDocument });
  const [createState, create] = useMutation(CreateKeyDocument);
  const [, revoke] = useMutation(RevokeKeyDocument);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const alerts = useKeyAlerts(reload);
  return (
    <Page title={t('nav.keys')}>
      <KeyCreation
        models={data?.catalogModels ?? []}
        state={createState}
        create={async (input) => {
          const result = await create({ input });
          if (result.data) reload();
          return result.data?.createKey;
        }}
      />
      <Card title={t('keys.yours')}>
        {!data && fetching ? (
          <Loading />
        ) : !data?.keys.length ? (
          <Empty>{t('keys.none')}</Empty>
        ) : (
          <KeyList
            keys={data.keys}
            alerts={alerts}
            onRevoke={async (id) => {
              await revoke({ id });
              reload();
            }}
          />
        )}
      </Card>
    </Page>
  );
}

/**
 * The new-key form and, once a key is made, its raw value shown once (the tab's keyring remembers it for the
 * playground). `create` makes the key (the account's or an organization's) and reloads the list.
 */
export function KeyCreation({ models, state, create }: { models: KeysQuery['catalogModels']; state: { fetching: boolean; error?: CombinedError }; create(input: CreateKeyInputs): Promise<CreatedApiKey | undefined> }) {
  const { t } = useI18n();
  const { remember } = useSession();
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const families = useMemo(() => familiesAndGroups(models), [models]);
  const [form, setForm] = useState({ label: '', providerFamily: '', routeGroup: '', monthlySpendCap: '' });
  const family = form.providerFamily || [...families.keys()][0] || '';
  const groups = [...(families.get(family) ?? new Map<string, string>()).entries()];
  const group = form.routeGroup && groups.some(([id]) => id === form.routeGroup) ? form.routeGroup : (groups[0]?.[0] ?? '');
  const problem = describeError(state.error);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const input = { providerFamily: family, routeGroup: group, ...(form.label ? { label: form.label } : {}), ...(form.monthlySpendCap ? { monthlySpendCap: form.monthlySpendCap } : {}) };
    const key = await create(input);
    if (key) {
      setCreated(key);
      remember({ label: key.label ?? key.id, secret: key.key, providerFamily: key.providerFamily });
      setForm({ label: '', providerFamily: form.providerFamily, routeGroup: form.routeGroup, monthlySpendCap: '' });
    }
  };

  return (
    <>
      {created && <CreatedKey created={created} onDone={() => setCreated(null)} />}
      <Card title={t('keys.create')}>
        <form onSubmit={submit} noValidate className="form-grid">
          <ProblemText problem={problem} />
          <Field label={t('keys.label')} value={form.label} maxLength={64} onChange={(e) => setForm({ ...form, label: e.target.value })} error={problem?.fields.label} />
          <SelectField label={t('keys.family')} value={family} onChange={(e) => setForm({ ...form, providerFamily: e.target.value, routeGroup: '' })} options={[...families.keys()].map((id) => ({ value: id, label: id }))} error={problem?.fields.providerFamily} />
          <SelectField label={t('keys.group')} value={group} onChange={(e) => setForm({ ...form, routeGroup: e.target.value })} options={groups.map(([id, label]) => ({ value: id, label }))} error={problem?.fields.routeGroup} />
          <Field label={t('keys.monthCap')} inputMode="decimal" placeholder="25.00" value={form.monthlySpendCap} onChange={(e) => setForm({ ...form, monthlySpendCap: e.target.value })} error={problem?.fields.monthlySpendCap} hint={t('keys.monthCapHint')} />
          <Button type="submit" busy={state.fetching} disabled={!family || !group}>
            {t('keys.createButton')}
          </Button>
        </form>
      </Card>
    </>
  );
}

type KeyAlert = { type: KeyEventType; limit: string | null; refused: number | null; at: string };

/**
 * The keys' events, live: a key created or revoked elsewhere reloads the list (`reload`, also run on every socket
 * (re)connect, since events sent while it was down are lost); a key whose monthly cap was reached or whose limit
 * refuses requests gets a badge (the latest of each kind per key). Ends with the page.
 */
export function useKeyAlerts(reload: () => void, organizationId: string | null = null): Record<string, KeyAlert[]> {
  useOnReconnect(reload);
  const [live] = useSubscription({ query: KeyEventsDocument, variables: { organizationId } }, (known: Record<string, KeyAlert[]> = {}, { keyEvents: event }) => {
    if (event.type === 'CREATED' || event.type === 'REVOKED') {
      reload();
      return known;
    }
    const alert: KeyAlert = { type: event.type, limit: event.limit ?? null, refused: event.refused ?? null, at: event.at };
    return { ...known, [event.keyId]: [...(known[event.keyId] ?? []).filter((a) => a.type !== event.type || a.limit !== alert.limit), alert] };
  });
  return live.data ?? {};
}

function AlertBadges({ alerts }: { alerts: KeyAlert[] }) {
  const { t, formatDate, count } = useI18n();
  return (
    <>
      {alerts.map((alert) => (
        <Badge key={`${alert.type}/${alert.limit}`} tone="warn">
          {alert.type === 'MONTHLY_CAP_REACHED'
            ? t('keys.capReached', { time: formatDate(alert.at) })
            : t('keys.limitRefused', { limit: limitName(t, alert.limit), requests: count('request', alert.refused ?? 0), time: formatDate(alert.at) })}
        </Badge>
      ))}
    </>
  );
}

const LIMITS = ['requests_per_minute', 'key_concurrency', 'account_concurrency', 'gateway_concurrency', 'monthly_spend_cap'] as const;

function limitName(t: ReturnType<typeof useI18n>['t'], limit: string | null): string {
  const known = LIMITS.find((name) => name === limit);
  return known ? t(`keys.limit.${known}`) : (limit ?? '');
}

type ListedKey = Omit<KeysQuery['keys'][number], 'pricingPlan'>;

/**
 * Keys, each with its live badges and a Revoke button that asks first; with `memberOf`, a column naming the member
 * who made each (an organization's keys), and `mayRevoke` hides the button on keys the role may not revoke.
 */
export function KeyList({ keys, alerts, onRevoke, memberOf, mayRevoke = () => true }: { keys: ListedKey[]; alerts: Record<string, KeyAlert[]>; onRevoke(id: string): Promise<void>; memberOf?: (key: ListedKey) => string; mayRevoke?: (key: ListedKey) => boolean }) {
  const { t, formatDate } = useI18n();
  const columns = [t('keys.label'), ...(memberOf ? [t('org.member')] : []), t('keys.family'), t('keys.group'), t('keys.monthCap'), t('keys.created'), t('keys.lastUsed'), t('keys.status')];
  return (
    <div className="table-wrap">
      <table className="table">
        <TableHead columns={columns} actions />
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} data-key-id={key.id}>
              <td>{key.label ?? key.id}</td>
              {memberOf && <td>{memberOf(key)}</td>}
              <td>{key.providerFamily}</td>
              <td>{key.routeGroup}</td>
              <td>{key.monthlySpendCap ? <Money usd={key.monthlySpendCap} /> : t('keys.noCap')}</td>
              <td>{formatDate(key.createdAt)}</td>
              <td>{formatDate(key.lastUsed)}</td>
              <td>
                <AlertBadges alerts={alerts[key.id] ?? []} />
              </td>
              <td>
                {mayRevoke(key) && (
                <Button
                  kind="danger"
                  aria-label={t('keys.revokeNamed', { name: key.label ?? key.id })}
                  onClick={async () => {
                    if (!confirm(t('keys.revokeConfirm', { name: key.label ?? key.id }))) return;
                    await onRevoke(key.id);
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
  );
}

/** The raw key, shown once, with ready-to-paste client set-ups for both official SDKs. */
export function CreatedKey({ created, onDone }: { created: CreatedApiKey; onDone(): void }) {
  const { t } = useI18n();
  const origin = location.origin;
  const openai = `import OpenAI from 'openai';\n\nconst client = new OpenAI({ apiKey: '${created.key}', baseURL: '${origin}/v1' });\nconst answer = await client.chat.completions.create({\n  model: '<model>',\n  messages: [{ role: 'user', content: 'Hello' }],\n});`;
  const anthropic = `import Anthropic from '@anthropic-ai/sdk';\n\nconst client = new Anthropic({\n  apiKey: '${created.key}',\n  baseURL: '${origin}',\n  authToken: null,\n  defaultHeaders: { 'anthropic-version': '2023-06-01' },\n});\nconst answer = await client.messages.create({\n  model: '<model>',\n  max_tokens: 256,\n  messages: [{ role: 'user', content: 'Hello' }],\n});`;
  const curl = `curl ${origin}/v1/chat/completions \\\n  -H 'Authorization: Bearer ${created.key}' \\\n  -H 'Content-Type: application/json' \\\n  -d '{"model": "<model>", "messages": [{"role": "user", "content": "Hello"}]}'`;
  return (
    <Card title={t('keys.createdTitle')} className="highlight">
      <Notice kind="warning">{t('keys.shownOnce')}</Notice>
      <div className="row">
        <code className="secret" data-testid="raw-key" data-copy={created.key}>
          {created.key}
        </code>
        <CopyButton text={created.key} />
      </div>
      <h3>OpenAI SDK</h3>
      <Code>{openai}</Code>
      <CopyButton text={openai} label={t('keys.copySnippet')} />
      <h3>Anthropic SDK</h3>
      <Code>{anthropic}</Code>
      <CopyButton text={anthropic} label={t('keys.copySnippet')} />
      <h3>curl</h3>
      <Code>{curl}</Code>
      <p>
        <Button kind="secondary" onClick={onDone}>
          {t('keys.saved')}
        </Button>
      </p>
    </Card>
  );
}
