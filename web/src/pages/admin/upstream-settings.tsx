import { useState, type FormEvent } from 'react';
import type { ApiIssue, ApiProblem } from '../../client.js';
import type { UpdateUpstreamInput } from '../../gql/graphql.js';
import { useI18n } from '../../i18n.js';
import type { StringKey } from '../../strings.js';
import { Button, Card, Field, Notice, SelectField } from '../../ui.js';
import { FormProblem, issueAt, NumberReader, useAction } from './upstream-kit.js';
import { CreateDocument, KINDS, UpdateDocument, type Upstream } from './upstream-api.js';
import { CredentialFields, clearSecrets, credentialInput, newCredential, type CredentialDraft } from './upstream-credentials.js';

/** The admin Upstreams page's settings of an upstream (kind, URL, limits, timeouts, health) and the form that creates one. */

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

export const TIMEOUTS = ['connectMs', 'firstByteMs', 'idleMs', 'keepAliveMs'] as const;
export const HEALTH_INTS = ['minFailures'] as const;
export const HEALTH_FLOATS = ['windowSeconds', 'failureRate', 'cooldownSeconds'] as const;
export const EMPTY_SETTINGS: SettingsDraft = { kind: 'openai-compatible', baseUrl: '', maxConcurrent: '', connectMs: '', firstByteMs: '', idleMs: '', keepAliveMs: '', windowSeconds: '', minFailures: '', failureRate: '', cooldownSeconds: '', fallback: '', nativeResponses: false };

export function settingsOf(upstream: Upstream): SettingsDraft {
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
export function tuningOf(draft: SettingsDraft, numbers: NumberReader, before?: SettingsDraft) {
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

export function fallbackOf(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((id) => id.trim())
    .filter(Boolean);
}

export const SETTINGS_PATHS = new Set(['kind', 'baseUrl', 'maxConcurrent', 'nativeResponses', ...TIMEOUTS.map((f) => `timeouts.${f}`), ...[...HEALTH_INTS, ...HEALTH_FLOATS].map((f) => `health.${f}`)]);

/** The fields of an upstream's settings; with `withId`, its id too (creation). */
export function SettingsFields({ draft, onChange, problem, local, editing }: { draft: SettingsDraft; onChange(next: SettingsDraft): void; problem: ApiProblem | null; local: Record<string, ApiIssue>; editing: boolean }) {
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

export function SettingsEditor({ upstream, onChanged }: { upstream: Upstream; onChanged(): void }) {
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

export function CreateUpstream({ onCreated, open }: { onCreated(): void; open: boolean }) {
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

