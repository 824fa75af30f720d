import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../client.js';
import { graphql } from '../gql/index.js';
import type { WebhookEndpointsQuery } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import type { StringKey } from '../strings.js';
import { Badge, Button, Card, CopyButton, Empty, Field, Loading, Notice, Page, ProblemText, TableHead } from '../ui.js';

const WebhookEndpointsDocument = graphql(`
  query WebhookEndpoints($language: String) {
    webhookEndpoints {
      id
      url
      description
      eventTypes
      enabled
      disabledReason
      createdAt
    }
    webhookEventTypes(language: $language) {
      type
      description
    }
  }
`);
const WebhookDeliveriesDocument = graphql(`
  query WebhookDeliveries($endpointId: ID!) {
    webhookDeliveries(endpointId: $endpointId, limit: 20) {
      id
      messageId
      eventType
      status
      attempts
      lastStatusCode
      lastError
      lastDurationMs
      lastAttemptAt
      createdAt
    }
  }
`);
const CreateWebhookEndpointDocument = graphql(`
  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {
    createWebhookEndpoint(input: $input) {
      id
      secret
    }
  }
`);
const UpdateWebhookEndpointDocument = graphql(`
  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {
    updateWebhookEndpoint(input: $input) {
      id
      enabled
      disabledReason
    }
  }
`);
const DeleteWebhookEndpointDocument = graphql(`
  mutation DeleteWebhookEndpoint($id: ID!) {
    deleteWebhookEndpoint(id: $id)
  }
`);
const RotateWebhookSecretDocument = graphql(`
  mutation RotateWebhookSecret($id: ID!) {
    rotateWebhookSecret(id: $id) {
      id
      secret
    }
  }
`);
const SendTestWebhookDocument = graphql(`
  mutation SendTestWebhook($endpointId: ID!) {
    sendTestWebhook(endpointId: $endpointId)
  }
`);
const ReplayWebhookDeliveryDocument = graphql(`
  mutation ReplayWebhookDelivery($deliveryId: ID!) {
    replayWebhookDelivery(deliveryId: $deliveryId) {
      id
    }
  }
`);

type Endpoint = WebhookEndpointsQuery['webhookEndpoints'][number];

export function Webhooks() {
  const { t, language } = useI18n();
  const [{ data, fetching }, refetch] = useQuery({ query: WebhookEndpointsDocument, variables: { language } });
  const [secret, setSecret] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  return (
    <Page title={t('nav.webhooks')}>
      <p className="hint">{t('webhooks.intro')}</p>
      {secret && <SecretOnce secret={secret} onDone={() => setSecret(null)} />}
      <CreateEndpoint
        eventTypes={data?.webhookEventTypes ?? []}
        onCreated={(created) => {
          setSecret(created);
          reload();
        }}
      />
      <Card title={t('webhooks.yours')}>
        {!data && fetching ? (
          <Loading />
        ) : !data?.webhookEndpoints.length ? (
          <Empty>{t('webhooks.none')}</Empty>
        ) : (
          data.webhookEndpoints.map((endpoint) => <EndpointCard key={endpoint.id} endpoint={endpoint} onChanged={reload} onSecret={setSecret} />)
        )}
      </Card>
    </Page>
  );
}

function CreateEndpoint({ eventTypes, onCreated }: { eventTypes: { type: string; description: string }[]; onCreated(secret: string): void }) {
  const { t, language } = useI18n();
  const [state, create] = useMutation(CreateWebhookEndpointDocument);
  const [form, setForm] = useState({ url: '', description: '', types: new Set<string>() });
  const problem = describeError(state.error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const input = { url: form.url, eventTypes: [...form.types], language, ...(form.description ? { description: form.description } : {}) };
    const result = await create({ input });
    if (result.data) {
      onCreated(result.data.createWebhookEndpoint.secret);
      setForm({ url: '', description: '', types: new Set() });
    }
  };
  const toggle = (type: string, on: boolean) => {
    const types = new Set(form.types);
    if (on) types.add(type);
    else types.delete(type);
    setForm({ ...form, types });
  };
  return (
    <Card title={t('webhooks.create')}>
      <form onSubmit={submit} noValidate className="form-grid">
        <ProblemText problem={problem} />
        <Field label={t('webhooks.url')} type="url" placeholder="https://example.com/webhooks" value={form.url} onChange={(e) => setForm({ ...form, url: e.target.value })} error={problem?.fields.url} hint={t('webhooks.urlHint')} />
        <Field label={t('webhooks.description')} value={form.description} maxLength={256} onChange={(e) => setForm({ ...form, description: e.target.value })} error={problem?.fields.description} />
        <fieldset className="event-types">
          <legend>{t('webhooks.events')}</legend>
          {eventTypes.map(({ type, description }) => (
            <label key={type} className="check">
              <input type="checkbox" name="eventTypes" value={type} checked={form.types.has(type)} onChange={(e) => toggle(type, e.target.checked)} />
              <span>
                <code>{type}</code> — {description}
              </span>
            </label>
          ))}
          {problem?.fields.eventTypes && <p className="field-error">{problem.fields.eventTypes.msg}</p>}
        </fieldset>
        <Button type="submit" busy={state.fetching} disabled={!form.url || form.types.size === 0}>
          {t('webhooks.createButton')}
        </Button>
      </form>
    </Card>
  );
}

function SecretOnce({ secret, onDone }: { secret: string; onDone(): void }) {
  const { t } = useI18n();
  return (
    <Card title={t('webhooks.secretTitle')} className="highlight">
      <Notice kind="warning">{t('webhooks.secretOnce')}</Notice>
      <div className="row">
        <code className="secret" data-testid="webhook-secret">
          {secret}
        </code>
        <CopyButton text={secret} />
      </div>
      <p>
        <Button kind="secondary" onClick={onDone}>
          {t('webhooks.saved')}
        </Button>
      </p>
    </Card>
  );
}

/** One endpoint: its state and actions, then its latest deliveries. */
function EndpointCard({ endpoint, onChanged, onSecret }: { endpoint: Endpoint; onChanged(): void; onSecret(secret: string): void }) {
  const { t } = useI18n();
  const [, update] = useMutation(UpdateWebhookEndpointDocument);
  const [, remove] = useMutation(DeleteWebhookEndpointDocument);
  const [, rotate] = useMutation(RotateWebhookSecretDocument);
  const [testState, sendTest] = useMutation(SendTestWebhookDocument);
  const [deliveries, refetchDeliveries] = useQuery({ query: WebhookDeliveriesDocument, variables: { endpointId: endpoint.id } });
  const reloadDeliveries = () => refetchDeliveries({ requestPolicy: 'network-only' });
  return (
    <section className="webhook-endpoint" data-endpoint={endpoint.id}>
      <h3>
        <code>{endpoint.url}</code> <Badge tone={endpoint.enabled ? 'good' : 'bad'}>{t(endpoint.enabled ? 'webhooks.enabled' : 'webhooks.disabled')}</Badge>
      </h3>
      {endpoint.description && <p>{endpoint.description}</p>}
      <p className="hint">{endpoint.eventTypes.join(', ')}</p>
      {endpoint.disabledReason === 'failing' && <Notice kind="warning">{t('webhooks.disabledFailing')}</Notice>}
      {testState.data && <Notice kind="success">{t('webhooks.testSent')}</Notice>}
      <div className="row">
        <Button kind="secondary" onClick={async () => (await update({ input: { id: endpoint.id, enabled: !endpoint.enabled } }), onChanged())}>
          {t(endpoint.enabled ? 'webhooks.disable' : 'webhooks.enable')}
        </Button>
        <Button kind="secondary" disabled={!endpoint.enabled} onClick={async () => (await sendTest({ endpointId: endpoint.id }), setTimeout(reloadDeliveries, 1_000))}>
          {t('webhooks.sendTest')}
        </Button>
        <Button
          kind="secondary"
          onClick={async () => {
            if (!confirm(t('webhooks.rotateConfirm'))) return;
            const result = await rotate({ id: endpoint.id });
            if (result.data) onSecret(result.data.rotateWebhookSecret.secret);
          }}
        >
          {t('webhooks.rotate')}
        </Button>
        <Button
          kind="danger"
          onClick={async () => {
            if (!confirm(t('webhooks.deleteConfirm', { url: endpoint.url }))) return;
            await remove({ id: endpoint.id });
            onChanged();
          }}
        >
          {t('webhooks.delete')}
        </Button>
        <Button kind="link" aria-label={t('webhooks.deliveries')} onClick={reloadDeliveries}>
          ↻
        </Button>
      </div>
      <h4>{t('webhooks.deliveries')}</h4>
      <DeliveryTable rows={deliveries.data?.webhookDeliveries ?? []} onReplayed={() => setTimeout(reloadDeliveries, 1_000)} />
    </section>
  );
}

function DeliveryTable({ rows, onReplayed }: { rows: { id: string; messageId: string; eventType: string; status: string; attempts: number; lastStatusCode?: number | null; lastError?: string | null; lastAttemptAt?: string | null; createdAt: string }[]; onReplayed(): void }) {
  const { t, formatDate } = useI18n();
  const [, replay] = useMutation(ReplayWebhookDeliveryDocument);
  if (!rows.length) return <Empty>{t('webhooks.noDeliveries')}</Empty>;
  return (
    <div className="table-wrap">
      <table className="table">
        <TableHead columns={[t('webhooks.event'), 'webhook-id', t('webhooks.status'), t('webhooks.response'), t('webhooks.attempts'), t('webhooks.time')]} actions />
        <tbody>
          {rows.map((row) => (
            <tr key={row.id} data-delivery={row.id}>
              <td>{row.eventType}</td>
              <td>
                <code>{row.messageId}</code>
              </td>
              <td>
                <Badge tone={row.status === 'delivered' ? 'good' : row.status === 'failed' ? 'bad' : 'warn'}>{t(`webhooks.status.${row.status}` as StringKey)}</Badge>
              </td>
              <td>{[row.lastStatusCode, row.lastError].filter((part) => part != null).join(' ') || '—'}</td>
              <td>{row.attempts}</td>
              <td>{formatDate(row.lastAttemptAt ?? row.createdAt)}</td>
              <td>
                <Button kind="secondary" onClick={async () => (await replay({ deliveryId: row.id }), onReplayed())}>
                  {t('webhooks.replay')}
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
