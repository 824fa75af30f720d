import { useState, type FormEvent } from 'react';
import { useClient, useQuery } from 'urql';
import { describeError, type ApiIssue, type ApiProblem } from '../../client.js';
import { graphql } from '../../gql/index.js';
import type { AdminTestUpstreamCredentialMutation, CabinetUpstreamFieldsFragment, ModelsQuery, UpdateUpstreamInput, UpstreamCredentialInput } from '../../gql/graphql.js';
import { useI18n } from '../../i18n.js';
import type { StringKey } from '../../strings.js';
import { Badge, Button, Card, Empty, Field, Loading, Notice, Page, ProblemText, SelectField, TableHead } from '../../ui.js';
import { ModelsDocument } from '../models.js';
import { decimalOrNull, FormProblem, issueAt, NumberReader, routingCredentialId, routingKey, useAction, useLiveHealth, type CredentialState } from './upstream-kit.js';

graphql(`
  fragment CabinetUpstreamFields on AdminUpstream {
    id
    kind
    baseUrl
    enabled
    active
    inactiveReason
    maxConcurrent
    nativeResponses
    fallback
    timeouts {
      connectMs
      firstByteMs
      idleMs
      keepAliveMs
    }
    health {
      windowSeconds
      minFailures
      failureRate
      cooldownSeconds
    }
    credentials {
      id
      routingId
      label
      source
      last4
      env
      enabled
      maxConcurrent
      usable
      problem
    }
    routes {
      id
      model
      group
      upstreamModel
      weight
      priority
      enabled
    }
    prices {
      model
      inputPer1m
      outputPer1m
      cacheReadPer1m
      cacheWritePer1m
      perImage
      perVideoSecond
    }
  }
`);
const UpstreamListDocument = graphql(`
  query AdminUpstreamList {
    adminUpstreams {
      ...CabinetUpstreamFields
    }
  }
`);
const CreateDocument = graphql(`
  mutation AdminCreateUpstream($input: CreateUpstreamInput!) {
    createUpstream(input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
const UpdateDocument = graphql(`
  mutation AdminUpdateUpstream($id: ID!, $input: UpdateUpstreamInput!) {
    updateUpstream(id: $id, input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
const SetEnabledDocument = graphql(`
  mutation AdminSetUpstreamEnabled($id: ID!, $enabled: Boolean!) {
    setUpstreamEnabled(id: $id, enabled: $enabled) {
      ...CabinetUpstreamFields
    }
  }
`);
const DeleteDocument = graphql(`
  mutation AdminDeleteUpstream($id: ID!) {
    deleteUpstream(id: $id)
  }
`);
const AddCredentialDocument = graphql(`
  mutation AdminAddUpstreamCredential($upstreamId: ID!, $input: UpstreamCredentialInput!) {
    addUpstreamCredential(upstreamId: $upstreamId, input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
const UpdateCredentialDocument = graphql(`
  mutation AdminUpdateUpstreamCredential($id: ID!, $input: UpstreamCredentialInput!) {
    updateUpstreamCredential(id: $id, input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
const DeleteCredentialDocument = graphql(`
  mutation AdminDeleteUpstreamCredential($id: ID!) {
    deleteUpstreamCredential(id: $id) {
      ...CabinetUpstreamFields
    }
  }
`);
const SetRoutesDocument = graphql(`
  mutation AdminSetUpstreamRoutes($upstreamId: ID!, $routes: [UpstreamRouteInput!]!) {
    setUpstreamRoutes(upstreamId: $upstreamId, routes: $routes) {
      ...CabinetUpstreamFields
    }
  }
`);
const SetPricesDocument = graphql(`
  mutation AdminSetUpstreamPrices($upstreamId: ID!, $prices: [UpstreamPriceInput!]!) {
    setUpstreamPrices(upstreamId: $upstreamId, prices: $prices) {
      ...CabinetUpstreamFields
    }
  }
`);
const TestDocument = graphql(`
  mutation AdminTestUpstreamCredential($input: UpstreamTestInput!) {
    testUpstreamCredential(input: $input) {
      ok
      status
      latencyMs
      outcome
      model
    }
  }
`);

type Upstream = CabinetUpstreamFieldsFragment;
type CatalogModel = ModelsQuery['catalogModels'][number];
type Credential = Upstream['credentials'][number];
type UpstreamTestResult = AdminTestUpstreamCredentialMutation['testUpstreamCredential'];

const KINDS = ['openai-compatible', 'anthropic', 'video-jobs'];
const STATE_TONE = { closed: 'good', half_open: 'warn', open: 'bad', rate_limited: 'warn', auth_failed: 'bad' } as const;
const OUTCOMES = ['ok', 'timeout', 'connection', 'rate_limited', 'server_error', 'rejected', 'misconfigured'];

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
function SecretText({ credential }: { credential: Credential }) {
  const { t } = useI18n();
  if (credential.source === 'env') return <>{t('up.fromEnv', { name: credential.env ?? '—' })}</>;
  return <code>{credential.last4 ? `…${credential.last4}` : '…'}</code>;
}

function StateBadge({ state }: { state: CredentialState | undefined }) {
  const { t } = useI18n();
  return (
    <span data-testid="credential-state" data-state={state?.state ?? 'none'}>
      <Badge tone={state ? STATE_TONE[state.state] : 'neutral'}>{t(`up.state.${state?.state ?? 'none'}` as StringKey)}</Badge>
    </span>
  );
}

function TestResultText({ result }: { result: UpstreamTestResult | ApiProblem }) {
  const { t } = useI18n();
  if (!('outcome' in result)) return <ProblemText problem={result} />;
  const outcome = OUTCOMES.includes(result.outcome) ? t(`up.outcome.${result.outcome}` as StringKey) : result.outcome;
  return (
    <span className="test-result" role="status" data-testid="test-result" data-outcome={result.outcome}>
      <Badge tone={result.ok ? 'good' : 'bad'}>{outcome}</Badge> {t('up.testLine', { status: result.status ?? '—', ms: result.latencyMs })}
    </span>
  );
}

function Credentials({ upstream, health, onChanged }: { upstream: Upstream; health: Record<string, CredentialState>; onChanged(): void }) {
  const { t, formatDate } = useI18n();
  const client = useClient();
  const [model, setModel] = useState('');
  // Each credential's last test: its result, or why it could not run.
  const [results, setResults] = useState<Record<string, UpstreamTestResult | ApiProblem>>({});
  const [testing, setTesting] = useState<string | null>(null);
  const [toggleState, toggle] = useAction(UpdateCredentialDocument);
  const [removeState, remove] = useAction(DeleteCredentialDocument);
  const routedModels = [...new Set(upstream.routes.map((r) => r.model))];
  if (!upstream.credentials.length)
    return (
      <>
        <h3>{t('up.credentials')}</h3>
        <Empty>{t('up.noCredentials')}</Empty>
      </>
    );
  const runTest = async (credential: Credential) => {
    setTesting(credential.id);
    const answer = await client.mutation(TestDocument, { input: { upstreamId: upstream.id, credentialId: routingCredentialId(credential), model: model || null } }).toPromise();
    setTesting(null);
    const outcome = answer.data?.testUpstreamCredential ?? describeError(answer.error) ?? { code: 'error', reason: null, message: t('up.testFailed'), fields: {}, paths: {} };
    setResults((known) => ({ ...known, [credential.id]: outcome }));
  };
  return (
    <>
      <h3>{t('up.credentials')}</h3>
      <ProblemText problem={toggleState.problem ?? removeState.problem} />
      {routedModels.length > 1 && <SelectField label={t('up.testModel')} value={model} onChange={(e) => setModel(e.target.value)} options={[{ value: '', label: t('up.firstRoute') }, ...routedModels.map((m) => ({ value: m, label: m }))]} />}
      <div className="table-wrap">
        <table className="table" data-testid="credentials">
          <TableHead columns={[t('up.label'), t('up.secretCol'), t('up.stateCol'), t('up.inFlight'), t('up.limit'), t('up.test')]} actions />
          <tbody>
            {upstream.credentials.map((credential) => {
              const state = credential.enabled && credential.usable ? health[routingKey(upstream.id, credential)] : undefined;
              const result = results[credential.id];
              return (
                <tr key={credential.id} data-credential={credential.label}>
                  <td>
                    {credential.label}
                    {!credential.enabled && (
                      <>
                        {' '}
                        <Badge tone="neutral">{t('up.disabled')}</Badge>
                      </>
                    )}
                    {!credential.usable && (
                      <>
                        {' '}
                        <Badge tone="bad">{t('up.unusable', { problem: credential.problem ?? '—' })}</Badge>
                      </>
                    )}
                  </td>
                  <td>
                    <SecretText credential={credential} />
                  </td>
                  <td>
                    <StateBadge state={state} />
                    {state?.until && state.state !== 'closed' && <span className="hint"> {t('up.until', { time: formatDate(state.until) })}</span>}
                    {state?.lastFailureAt && <span className="hint test-result">{t('up.lastFailure', { time: formatDate(state.lastFailureAt) })}</span>}
                  </td>
                  <td className="num">{state?.inFlight ?? 0}</td>
                  <td className="num">{credential.maxConcurrent ?? '—'}</td>
                  <td>
                    <Button kind="secondary" busy={testing === credential.id} aria-label={t('up.testLabel', { label: credential.label })} onClick={() => void runTest(credential)}>
                      {t('up.test')}
                    </Button>
                    {result && <TestResultText result={result} />}
                  </td>
                  <td>
                    <div className="row">
                      <Button kind="link" aria-label={t(credential.enabled ? 'up.disableCredential' : 'up.enableCredential', { label: credential.label })} onClick={async () => (await toggle({ id: credential.id, input: { enabled: !credential.enabled } })) && onChanged()}>
                        {t(credential.enabled ? 'up.disable' : 'up.enable')}
                      </Button>
                      <Button
                        kind="link"
                        aria-label={t('up.removeCredential', { label: credential.label })}
                        onClick={async () => {
                          if (!confirm(t('up.removeConfirm', { label: credential.label, id: upstream.id }))) return;
                          if (await remove({ id: credential.id })) onChanged();
                        }}
                      >
                        {t('up.remove')}
                      </Button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** One credential being entered: its secret is not here (an uncontrolled password input named `secret-<key>` holds it until sent). */
interface CredentialDraft {
  key: number;
  source: 'secret' | 'env';
  label: string;
  env: string;
  maxConcurrent: string;
}
let draftKeys = 0;
const newCredential = (): CredentialDraft => ({ key: ++draftKeys, source: 'secret', label: '', env: '', maxConcurrent: '' });

function CredentialFields({ draft, onChange, at, problem, local }: { draft: CredentialDraft; onChange(next: CredentialDraft): void; at: string; problem: ApiProblem | null; local: Record<string, ApiIssue> }) {
  const { t } = useI18n();
  const issue = (field: string) => issueAt(problem, local, at ? `${at}.${field}` : field);
  return (
    <div className="form-grid">
      <SelectField
        label={t('up.source')}
        value={draft.source}
        onChange={(e) => onChange({ ...draft, source: e.target.value as CredentialDraft['source'] })}
        options={[
          { value: 'secret', label: t('up.sourceSecret') },
          { value: 'env', label: t('up.sourceEnv') },
        ]}
      />
      <Field label={t('up.label')} value={draft.label} maxLength={64} onChange={(e) => onChange({ ...draft, label: e.target.value })} error={issue('label')} hint={t('up.labelHint')} />
      {draft.source === 'secret' ? (
        <Field key="secret" label={t('up.secret')} type="password" name={`secret-${draft.key}`} autoComplete="new-password" spellCheck={false} error={issue('secret')} hint={t('up.secretHint')} />
      ) : (
        <Field key="env" label={t('up.env')} value={draft.env} spellCheck={false} onChange={(e) => onChange({ ...draft, env: e.target.value })} error={issue('env') ?? issue('secret')} hint={t('up.envHint')} />
      )}
      <Field label={t('up.credentialLimit')} inputMode="numeric" value={draft.maxConcurrent} onChange={(e) => onChange({ ...draft, maxConcurrent: e.target.value })} error={issue('maxConcurrent')} hint={t('up.credentialLimitHint')} />
    </div>
  );
}

/** The credential input of a draft, its secret read from the form's password input (which is then cleared by the caller). */
function credentialInput(draft: CredentialDraft, form: HTMLFormElement, at: string, numbers: NumberReader): UpstreamCredentialInput {
  const input: UpstreamCredentialInput = {};
  if (draft.label.trim()) input.label = draft.label.trim();
  if (draft.source === 'secret') input.secret = (form.elements.namedItem(`secret-${draft.key}`) as HTMLInputElement | null)?.value ?? '';
  else input.env = draft.env.trim();
  const limit = numbers.int(at ? `${at}.maxConcurrent` : 'maxConcurrent', draft.maxConcurrent);
  if (limit !== undefined) input.maxConcurrent = limit;
  return input;
}

/** Empties every password input of a form: a secret sent is kept nowhere, not even in the field. */
function clearSecrets(form: HTMLFormElement): void {
  for (const input of form.querySelectorAll<HTMLInputElement>('input[type="password"]')) input.value = '';
}

function AddCredential({ upstream, onChanged }: { upstream: Upstream; onChanged(): void }) {
  const { t } = useI18n();
  const [draft, setDraft] = useState(newCredential);
  const [local, setLocal] = useState<Record<string, ApiIssue>>({});
  const [state, add] = useAction(AddCredentialDocument);
  const [saved, setSaved] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const numbers = new NumberReader();
    const input = credentialInput(draft, form, '', numbers);
    setLocal(numbers.issues);
    setSaved(false);
    if (!numbers.ok) return clearSecrets(form);
    const answer = await add({ upstreamId: upstream.id, input });
    clearSecrets(form);
    if (answer) {
      setDraft(newCredential());
      setSaved(true);
      onChanged();
    }
  };
  return (
    <form onSubmit={submit} noValidate aria-label={t('up.addCredentialTo', { id: upstream.id })}>
      <FormProblem problem={state.problem} shown={(path) => ['label', 'secret', 'env', 'maxConcurrent'].includes(path)} />
      <CredentialFields key={draft.key} draft={draft} onChange={setDraft} at="" problem={state.problem} local={local} />
      <Button type="submit" busy={state.fetching}>
        {t('up.add')}
      </Button>
      {saved && <Notice kind="success">{t('up.credentialAdded')}</Notice>}
    </form>
  );
}

interface RouteDraft {
  model: string;
  group: string;
  upstreamModel: string;
  weight: string;
  priority: string;
  enabled: boolean;
}

function modelOptions(models: CatalogModel[], current: string) {
  const options = models.map((m) => ({ value: m.id, label: m.id }));
  if (current && !models.some((m) => m.id === current)) options.unshift({ value: current, label: current });
  return options;
}

function RoutesEditor({ upstream, models, onChanged }: { upstream: Upstream; models: CatalogModel[]; onChanged(): void }) {
  const { t } = useI18n();
  const initial = (): RouteDraft[] => upstream.routes.map((r) => ({ model: r.model, group: r.group, upstreamModel: r.upstreamModel === r.model ? '' : r.upstreamModel, weight: String(r.weight), priority: String(r.priority), enabled: r.enabled }));
  const [rows, setRows] = useState<RouteDraft[] | null>(null);
  const [local, setLocal] = useState<Record<string, ApiIssue>>({});
  const [state, save] = useAction(SetRoutesDocument);
  const [saved, setSaved] = useState(false);
  const values = rows ?? initial();
  const set = (index: number, change: Partial<RouteDraft>) => setRows(values.map((row, i) => (i === index ? { ...row, ...change } : row)));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const numbers = new NumberReader();
    const routes = values.map((row, i) => ({
      model: row.model,
      group: row.group,
      ...(row.upstreamModel.trim() ? { upstreamModel: row.upstreamModel.trim() } : {}),
      weight: numbers.float(`routes.${i}.weight`, row.weight),
      priority: numbers.int(`routes.${i}.priority`, row.priority),
      enabled: row.enabled,
    }));
    setLocal(numbers.issues);
    if (!numbers.ok) return;
    if (await save({ upstreamId: upstream.id, routes })) {
      setRows(null);
      setSaved(true);
      onChanged();
    }
  };
  const issue = (i: number, field: string) => issueAt(state.problem, local, `routes.${i}.${field}`);
  const firstModel = models[0];
  return (
    <form onSubmit={submit} noValidate aria-label={t('up.routesOf', { id: upstream.id })}>
      <p className="hint">{t('up.routesHint')}</p>
      <FormProblem problem={state.problem} shown={(path) => /^routes\.\d+\.(model|group|upstreamModel|weight|priority)$/.test(path)} />
      {values.length === 0 && <Empty>{t('up.noRoutes')}</Empty>}
      {values.map((row, i) => {
        const groups = models.find((m) => m.id === row.model)?.groups ?? [];
        const groupOptions = groups.map((g) => ({ value: g.id, label: `${g.label} (${g.id})` }));
        if (row.group && !groups.some((g) => g.id === row.group)) groupOptions.unshift({ value: row.group, label: row.group });
        return (
          <fieldset key={i} className="editor-row" data-route={i}>
            <legend>{t('up.route', { n: i + 1 })}</legend>
            <div className="form-grid">
              <SelectField label={t('models.model')} value={row.model} onChange={(e) => set(i, { model: e.target.value, group: models.find((m) => m.id === e.target.value)?.groups[0]?.id ?? '' })} options={modelOptions(models, row.model)} error={issue(i, 'model')} />
              <SelectField label={t('keys.group')} value={row.group} onChange={(e) => set(i, { group: e.target.value })} options={groupOptions} error={issue(i, 'group')} />
              <Field label={t('up.upstreamModel')} value={row.upstreamModel} placeholder={row.model} spellCheck={false} onChange={(e) => set(i, { upstreamModel: e.target.value })} error={issue(i, 'upstreamModel')} />
              <Field label={t('up.weight')} inputMode="decimal" value={row.weight} onChange={(e) => set(i, { weight: e.target.value })} error={issue(i, 'weight')} />
              <Field label={t('up.priority')} inputMode="numeric" value={row.priority} onChange={(e) => set(i, { priority: e.target.value })} error={issue(i, 'priority')} />
              <label className="check">
                <input type="checkbox" checked={row.enabled} onChange={(e) => set(i, { enabled: e.target.checked })} />
                {t('up.routeEnabled')}
              </label>
            </div>
            <Button kind="link" onClick={() => setRows(values.filter((_, k) => k !== i))} aria-label={t('up.removeRoute', { n: i + 1 })}>
              {t('up.remove')}
            </Button>
          </fieldset>
        );
      })}
      <div className="row">
        <Button kind="secondary" onClick={() => setRows([...values, { model: firstModel?.id ?? '', group: firstModel?.groups[0]?.id ?? '', upstreamModel: '', weight: '1', priority: '0', enabled: true }])}>
          {t('up.addRoute')}
        </Button>
        <Button type="submit" busy={state.fetching}>
          {t('up.saveRoutes')}
        </Button>
      </div>
      {saved && <Notice kind="success">{t('up.routesSaved')}</Notice>}
    </form>
  );
}

const PRICE_FIELDS = ['inputPer1m', 'outputPer1m', 'cacheReadPer1m', 'cacheWritePer1m', 'perImage', 'perVideoSecond'] as const;
type PriceField = (typeof PRICE_FIELDS)[number];
type PriceDraft = { model: string } & Record<PriceField, string>;
const PRICE_LABELS: Record<PriceField, StringKey> = {
  inputPer1m: 'admin.inputPrice',
  outputPer1m: 'admin.outputPrice',
  cacheReadPer1m: 'admin.cacheReadPrice',
  cacheWritePer1m: 'admin.cacheWritePrice',
  perImage: 'up.perImage',
  perVideoSecond: 'up.perVideoSecond',
};

function PricesEditor({ upstream, models, onChanged }: { upstream: Upstream; models: CatalogModel[]; onChanged(): void }) {
  const { t } = useI18n();
  const initial = (): PriceDraft[] => upstream.prices.map((p) => ({ model: p.model, ...Object.fromEntries(PRICE_FIELDS.map((f) => [f, p[f] ?? ''])) }) as PriceDraft);
  const [rows, setRows] = useState<PriceDraft[] | null>(null);
  const [state, save] = useAction(SetPricesDocument);
  const [saved, setSaved] = useState(false);
  const values = rows ?? initial();
  const set = (index: number, change: Partial<PriceDraft>) => setRows(values.map((row, i) => (i === index ? { ...row, ...change } : row)));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const prices = values.map((row) => ({ model: row.model, ...Object.fromEntries(PRICE_FIELDS.map((f) => [f, decimalOrNull(row[f])])) }));
    if (await save({ upstreamId: upstream.id, prices })) {
      setRows(null);
      setSaved(true);
      onChanged();
    }
  };
  // A new row prices a model the upstream routes and has no price for yet.
  const unpriced = upstream.routes.map((r) => r.model).find((m) => !values.some((row) => row.model === m)) ?? models[0]?.id ?? '';
  return (
    <form onSubmit={submit} noValidate aria-label={t('up.pricesOf', { id: upstream.id })}>
      <p className="hint">{t('up.pricesHint')}</p>
      <FormProblem problem={state.problem} shown={(path) => /^prices\.\d+\.(model|inputPer1m|outputPer1m|cacheReadPer1m|cacheWritePer1m|perImage|perVideoSecond)$/.test(path)} />
      {values.length === 0 && <Empty>{t('up.noPrices')}</Empty>}
      {values.map((row, i) => (
        <fieldset key={i} className="editor-row" data-price={row.model}>
          <legend>{t('up.price', { n: i + 1 })}</legend>
          <div className="form-grid">
            <SelectField label={t('models.model')} value={row.model} onChange={(e) => set(i, { model: e.target.value })} options={modelOptions(models, row.model)} error={state.problem?.paths[`prices.${i}.model`]} />
            {PRICE_FIELDS.map((field) => (
              <Field key={field} label={t(PRICE_LABELS[field])} inputMode="decimal" value={row[field]} onChange={(e) => set(i, { [field]: e.target.value })} error={state.problem?.paths[`prices.${i}.${field}`]} />
            ))}
          </div>
          <Button kind="link" onClick={() => setRows(values.filter((_, k) => k !== i))} aria-label={t('up.removePrice', { n: i + 1 })}>
            {t('up.remove')}
          </Button>
        </fieldset>
      ))}
      <div className="row">
        <Button kind="secondary" onClick={() => setRows([...values, { model: unpriced, inputPer1m: '', outputPer1m: '', cacheReadPer1m: '', cacheWritePer1m: '', perImage: '', perVideoSecond: '' }])}>
          {t('up.addPrice')}
        </Button>
        <Button type="submit" busy={state.fetching}>
          {t('up.savePrices')}
        </Button>
      </div>
      {saved && <Notice kind="success">{t('up.pricesSaved')}</Notice>}
    </form>
  );
}

/** The settings an upstream is created with and edited by, as the form holds them (text). */
interface SettingsDraft {
  kind: string;
  baseUrl: string;
  maxConcurrent: string;
  connectMs: string;
  firstByteMs: string;
  idleMs: string;
  keepAliveMs: string;
  windowSeconds: string;
  minFailures: string;
  failureRate: string;
  cooldownSeconds: string;
  fallback: string;
  nativeResponses: boolean;
}
const TIMEOUTS = ['connectMs', 'firstByteMs', 'idleMs', 'keepAliveMs'] as const;
const HEALTH_INTS = ['minFailures'] as const;
const HEALTH_FLOATS = ['windowSeconds', 'failureRate', 'cooldownSeconds'] as const;
const EMPTY_SETTINGS: SettingsDraft = { kind: 'openai-compatible', baseUrl: '', maxConcurrent: '', connectMs: '', firstByteMs: '', idleMs: '', keepAliveMs: '', windowSeconds: '', minFailures: '', failureRate: '', cooldownSeconds: '', fallback: '', nativeResponses: false };

function settingsOf(upstream: Upstream): SettingsDraft {
  return {
    kind: upstream.kind,
    baseUrl: upstream.baseUrl,
    maxConcurrent: String(upstream.maxConcurrent),
    ...(Object.fromEntries(TIMEOUTS.map((f) => [f, String(upstream.timeouts[f])])) as Record<(typeof TIMEOUTS)[number], string>),
    windowSeconds: String(upstream.health.windowSeconds),
    minFailures: String(upstream.health.minFailures),
    failureRate: String(upstream.health.failureRate),
    cooldownSeconds: String(upstream.health.cooldownSeconds),
    fallback: upstream.fallback.join(', '),
    nativeResponses: upstream.nativeResponses,
  };
}

/** The timeouts and health a draft names (only the fields given; the API keeps or defaults the rest). */
function tuningOf(draft: SettingsDraft, numbers: NumberReader, before?: SettingsDraft) {
  const changed = (field: keyof SettingsDraft) => !before || draft[field] !== before[field];
  const timeouts: Record<string, number> = {};
  for (const field of TIMEOUTS) {
    const value = changed(field) ? numbers.int(`timeouts.${field}`, draft[field]) : undefined;
    if (value !== undefined) timeouts[field] = value;
  }
  const health: Record<string, number> = {};
  for (const field of HEALTH_INTS) {
    const value = changed(field) ? numbers.int(`health.${field}`, draft[field]) : undefined;
    if (value !== undefined) health[field] = value;
  }
  for (const field of HEALTH_FLOATS) {
    const value = changed(field) ? numbers.float(`health.${field}`, draft[field]) : undefined;
    if (value !== undefined) health[field] = value;
  }
  return { timeouts: Object.keys(timeouts).length ? timeouts : undefined, health: Object.keys(health).length ? health : undefined };
}

function fallbackOf(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((id) => id.trim())
    .filter(Boolean);
}

const SETTINGS_PATHS = new Set(['kind', 'baseUrl', 'maxConcurrent', 'nativeResponses', ...TIMEOUTS.map((f) => `timeouts.${f}`), ...[...HEALTH_INTS, ...HEALTH_FLOATS].map((f) => `health.${f}`)]);

/** The fields of an upstream's settings; with `withId`, its id too (creation). */
function SettingsFields({ draft, onChange, problem, local, editing }: { draft: SettingsDraft; onChange(next: SettingsDraft): void; problem: ApiProblem | null; local: Record<string, ApiIssue>; editing: boolean }) {
  const { t } = useI18n();
  const issue = (path: string) => issueAt(problem, local, path);
  const field = (name: keyof SettingsDraft, path: string, label: StringKey, inputMode: 'numeric' | 'decimal') => (
    <Field label={t(label)} inputMode={inputMode} value={String(draft[name])} onChange={(e) => onChange({ ...draft, [name]: e.target.value })} error={issue(path)} placeholder={editing ? undefined : t('up.default')} />
  );
  return (
    <>
      <div className="form-grid">
        <SelectField label={t('up.kind')} value={draft.kind} onChange={(e) => onChange({ ...draft, kind: e.target.value })} options={KINDS.map((k) => ({ value: k, label: k }))} error={issue('kind')} />
        <Field label={t('up.baseUrl')} type="url" value={draft.baseUrl} spellCheck={false} onChange={(e) => onChange({ ...draft, baseUrl: e.target.value })} error={issue('baseUrl')} hint={t('up.baseUrlHint')} />
        {field('maxConcurrent', 'maxConcurrent', 'up.maxConcurrent', 'numeric')}
        {editing && (
          <>
            <Field label={t('up.fallback')} value={draft.fallback} spellCheck={false} onChange={(e) => onChange({ ...draft, fallback: e.target.value })} error={Object.entries(problem?.paths ?? {}).find(([path]) => path.startsWith('fallback'))?.[1]} hint={t('up.fallbackHint')} />
            <label className="check">
              <input type="checkbox" checked={draft.nativeResponses} onChange={(e) => onChange({ ...draft, nativeResponses: e.target.checked })} aria-invalid={issue('nativeResponses') ? true : undefined} />
              {t('up.nativeResponses')}
            </label>
          </>
        )}
      </div>
      <fieldset className="editor-row">
        <legend>{t('up.timeouts')}</legend>
        <div className="form-grid">
          {field('connectMs', 'timeouts.connectMs', 'up.connectMs', 'numeric')}
          {field('firstByteMs', 'timeouts.firstByteMs', 'up.firstByteMs', 'numeric')}
          {field('idleMs', 'timeouts.idleMs', 'up.idleMs', 'numeric')}
          {field('keepAliveMs', 'timeouts.keepAliveMs', 'up.keepAliveMs', 'numeric')}
        </div>
      </fieldset>
      <fieldset className="editor-row">
        <legend>{t('up.health')}</legend>
        <div className="form-grid">
          {field('windowSeconds', 'health.windowSeconds', 'up.windowSeconds', 'decimal')}
          {field('minFailures', 'health.minFailures', 'up.minFailures', 'numeric')}
          {field('failureRate', 'health.failureRate', 'up.failureRate', 'decimal')}
          {field('cooldownSeconds', 'health.cooldownSeconds', 'up.cooldownSeconds', 'decimal')}
        </div>
      </fieldset>
    </>
  );
}

function SettingsEditor({ upstream, onChanged }: { upstream: Upstream; onChanged(): void }) {
  const { t } = useI18n();
  const [draft, setDraft] = useState<SettingsDraft | null>(null);
  const [local, setLocal] = useState<Record<string, ApiIssue>>({});
  const [state, update] = useAction(UpdateDocument);
  const [saved, setSaved] = useState(false);
  const before = settingsOf(upstream);
  const values = draft ?? before;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const numbers = new NumberReader();
    const input: UpdateUpstreamInput = { ...tuningOf(values, numbers, before) };
    if (values.kind !== before.kind) input.kind = values.kind;
    if (values.baseUrl !== before.baseUrl) input.baseUrl = values.baseUrl.trim();
    if (values.maxConcurrent !== before.maxConcurrent) input.maxConcurrent = numbers.int('maxConcurrent', values.maxConcurrent);
    if (values.fallback !== before.fallback) input.fallback = fallbackOf(values.fallback);
    if (values.nativeResponses !== before.nativeResponses) input.nativeResponses = values.nativeResponses;
    setLocal(numbers.issues);
    if (!numbers.ok) return;
    if (await update({ id: upstream.id, input })) {
      setDraft(null);
      setSaved(true);
      onChanged();
    }
  };
  return (
    <form onSubmit={submit} noValidate aria-label={t('up.settingsOf', { id: upstream.id })}>
      <FormProblem problem={state.problem} shown={(path) => SETTINGS_PATHS.has(path) || path.startsWith('fallback')} />
      <SettingsFields draft={values} onChange={setDraft} problem={state.problem} local={local} editing />
      <Button type="submit" busy={state.fetching}>
        {t('up.saveSettings')}
      </Button>
      {saved && <Notice kind="success">{t('up.settingsSaved')}</Notice>}
    </form>
  );
}

function CreateUpstream({ onCreated, open }: { onCreated(): void; open: boolean }) {
  const { t } = useI18n();
  const [id, setId] = useState('');
  const [settings, setSettings] = useState(EMPTY_SETTINGS);
  const [credentials, setCredentials] = useState<CredentialDraft[]>(() => [newCredential()]);
  const [local, setLocal] = useState<Record<string, ApiIssue>>({});
  const [state, create] = useAction(CreateDocument);
  const [created, setCreated] = useState<string | null>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    setCreated(null);
    const numbers = new NumberReader();
    const input = {
      id: id.trim(),
      kind: settings.kind,
      baseUrl: settings.baseUrl.trim(),
      maxConcurrent: numbers.int('maxConcurrent', settings.maxConcurrent),
      ...tuningOf(settings, numbers),
      credentials: credentials.map((draft, i) => credentialInput(draft, form, `credentials.${i}`, numbers)),
    };
    setLocal(numbers.issues);
    if (!numbers.ok) return clearSecrets(form);
    const answer = await create({ input });
    // Sent: the secrets leave the page, whatever the answer (a refused form asks for them again).
    clearSecrets(form);
    if (answer) {
      setCreated(answer.createUpstream.id);
      setId('');
      setSettings(EMPTY_SETTINGS);
      setCredentials([newCredential()]);
      onCreated();
    }
  };
  const shown = (path: string) => path === 'id' || SETTINGS_PATHS.has(path) || /^credentials\.\d+\.(label|secret|env|maxConcurrent)$/.test(path);
  return (
    <Card title={t('up.newTitle')}>
      <details className="section" open={open || undefined}>
        <summary>{t('up.newSummary')}</summary>
        <form onSubmit={submit} noValidate aria-label={t('up.newTitle')} data-testid="create-upstream">
          <FormProblem problem={state.problem} shown={shown} />
          <div className="form-grid">
            <Field label={t('up.id')} value={id} spellCheck={false} maxLength={64} onChange={(e) => setId(e.target.value)} error={issueAt(state.problem, local, 'id')} hint={t('up.idHint')} />
          </div>
          <SettingsFields draft={settings} onChange={setSettings} problem={state.problem} local={local} editing={false} />
          <h3>{t('up.credentials')}</h3>
          <p className="hint">{t('up.poolHint')}</p>
          {credentials.map((draft, i) => (
            <fieldset key={draft.key} className="editor-row" data-credential-row={i}>
              <legend>{t('up.credential', { n: i + 1 })}</legend>
              <CredentialFields draft={draft} onChange={(next) => setCredentials(credentials.map((c) => (c.key === draft.key ? next : c)))} at={`credentials.${i}`} problem={state.problem} local={local} />
              {credentials.length > 1 && (
                <Button kind="link" onClick={() => setCredentials(credentials.filter((c) => c.key !== draft.key))} aria-label={t('up.removeRow', { n: i + 1 })}>
                  {t('up.remove')}
                </Button>
              )}
            </fieldset>
          ))}
          <div className="row">
            <Button kind="secondary" onClick={() => setCredentials([...credentials, newCredential()])}>
              {t('up.addRow')}
            </Button>
            <Button type="submit" busy={state.fetching}>
              {t('up.create')}
            </Button>
          </div>
        </form>
      </details>
      {created && <Notice kind="success">{t('up.created', { id: created })}</Notice>}
    </Card>
  );
}
