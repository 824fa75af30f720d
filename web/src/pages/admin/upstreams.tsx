import { useQuery } from 'urql';
import { describeError } from '../../client.js';
import { useI18n } from '../../i18n.js';
import { Badge, Button, Empty, Loading, Page, ProblemText } from '../../ui.js';
import { ModelsDocument } from '../models.js';
import { routingKey, useAction, useLiveHealth, type CredentialState } from './upstream-kit.js';
import { DeleteDocument, SetEnabledDocument, UpstreamListDocument, type CatalogModel, type Upstream } from './upstream-api.js';
import { AddCredential, Credentials } from './upstream-credentials.js';
import { PricesEditor, RoutesEditor } from './upstream-editors.js';
import { CreateUpstream, SettingsEditor } from './upstream-settings.js';

/**
 * Managed upstreams: each with its credentials' live routing state (a badge per credential, moved by
 * `upstreamHealthChanged` without a reload), enabling, deleting, credentials (a secret is typed once, sent,
 * and cleared: the page keeps none and the API shows only its last four characters), routes from the catalog,
 * the upstream's own prices, and a test request per credential.
 */
export function AdminUpstreams() {
  const { t } = useI18n();
  const [{ data, error }, refetch] = useQuery({ query: UpstreamListDocument, requestPolicy: 'network-only' });
  const [{ data: catalog }] = useQuery({ query: ModelsDocument });
  const health = useLiveHealth();
  // Routing takes every change at once: its state (the credentials it routes) is read again with the list.
  const changed = () => {
    refetch({ requestPolicy: 'network-only' });
    void health.reload();
  };
  if (!data) return <Page title={t('nav.adminUpstreams')}>{error ? <ProblemText problem={describeError(error)} /> : <Loading />}</Page>;
  const models = catalog?.catalogModels ?? [];
  return (
    <Page title={t('nav.adminUpstreams')}>
      <p className="hint">{t('up.intro')}</p>
      {data.adminUpstreams.length === 0 && <Empty>{t('up.none')}</Empty>}
      {data.adminUpstreams.map((upstream) => (
        <UpstreamCard key={upstream.id} upstream={upstream} health={health.states} models={models} onChanged={changed} />
      ))}
      <CreateUpstream onCreated={changed} open={data.adminUpstreams.length === 0} />
    </Page>
  );
}

function UpstreamCard({ upstream, health, models, onChanged }: { upstream: Upstream; health: Record<string, CredentialState>; models: CatalogModel[]; onChanged(): void }) {
  const { t } = useI18n();
  const [enableState, setEnabled] = useAction(SetEnabledDocument);
  const [deleteState, remove] = useAction(DeleteDocument);
  const inFlight = upstream.credentials.reduce((sum, c) => sum + (health[routingKey(upstream.id, c)]?.inFlight ?? 0), 0);
  return (
    <div className="card" data-upstream={upstream.id}>
      <div className="upstream-head">
        <h2>{upstream.id}</h2>
        <div className="row">
          <Badge tone={upstream.enabled ? 'good' : 'neutral'}>{t(upstream.enabled ? 'up.enabled' : 'up.disabled')}</Badge>
          <Badge tone={upstream.active ? 'good' : 'warn'}>{upstream.active ? t('up.active') : t('up.inactive', { reason: upstream.inactiveReason ?? '—' })}</Badge>
          <span data-testid="in-flight">{t('up.inFlightTotal', { count: inFlight })}</span>
          <Button kind="secondary" busy={enableState.fetching} onClick={async () => (await setEnabled({ id: upstream.id, enabled: !upstream.enabled })) && onChanged()}>
            {t(upstream.enabled ? 'up.disable' : 'up.enable')}
          </Button>
          <Button
            kind="danger"
            busy={deleteState.fetching}
            onClick={async () => {
              if (!confirm(t('up.deleteConfirm', { id: upstream.id }))) return;
              if (await remove({ id: upstream.id })) onChanged();
            }}
          >
            {t('up.delete')}
          </Button>
        </div>
      </div>
      <p className="hint">
        {upstream.kind} · <code>{upstream.baseUrl}</code> · {t('up.limitLine', { count: upstream.maxConcurrent })}
        {upstream.fallback.length > 0 && <> · {t('up.fallbackLine', { ids: upstream.fallback.join(', ') })}</>}
      </p>
      <ProblemText problem={enableState.problem ?? deleteState.problem} />
      <Credentials upstream={upstream} health={health} onChanged={onChanged} />
      <details className="section">
        <summary>{t('up.addCredential')}</summary>
        <AddCredential upstream={upstream} onChanged={onChanged} />
      </details>
      <details className="section">
        <summary>{t('up.routes', { count: upstream.routes.length })}</summary>
        <RoutesEditor upstream={upstream} models={models} onChanged={onChanged} />
      </details>
      <details className="section">
        <summary>{t('up.prices', { count: upstream.prices.length })}</summary>
        <PricesEditor upstream={upstream} models={models} onChanged={onChanged} />
      </details>
      <details className="section">
        <summary>{t('up.settings')}</summary>
        <SettingsEditor upstream={upstream} onChanged={onChanged} />
      </details>
    </div>
  );
}

/** A credential's secret as an admin may see it: the last four characters, or the variable's name. */
