import { useState, type FormEvent } from 'react';
import { useClient } from 'urql';
import { describeError, type ApiIssue, type ApiProblem } from '../../client.js';
import type { UpstreamCredentialInput } from '../../gql/graphql.js';
import { useI18n } from '../../i18n.js';
import type { StringKey } from '../../strings.js';
import { Badge, Button, Empty, Field, Notice, ProblemText, SelectField, TableHead } from '../../ui.js';
import { FormProblem, issueAt, NumberReader, routingCredentialId, routingKey, useAction, type CredentialState } from './upstream-kit.js';
import { AddCredentialDocument, DeleteCredentialDocument, OUTCOMES, STATE_TONE, TestDocument, UpdateCredentialDocument, type Credential, type Upstream, type UpstreamTestResult } from './upstream-api.js';

/** The admin Upstreams page's credentials: a pool's table with live state and the Test action, and adding one (secrets write-only). */

export function SecretText({ credential }: { credential: Credential }) {
  const { t } = useI18n();
  if (credential.source === 'env') return <>{t('up.fromEnv', { name: credential.env ?? '—' })}</>;
  return <code>{credential.last4 ? `…${credential.last4}` : '…'}</code>;
}

export function StateBadge({ state }: { state: CredentialState | undefined }) {
  const { t } = useI18n();
  return (
    <span data-testid="credential-state" data-state={state?.state ?? 'none'}>
      <Badge tone={state ? STATE_TONE[state.state] : 'neutral'}>{t(`up.state.${state?.state ?? 'none'}` as StringKey)}</Badge>
    </span>
  );
}

export function TestResultText({ result }: { result: UpstreamTestResult | ApiProblem }) {
  const { t } = useI18n();
  if (!('outcome' in result)) return <ProblemText problem={result} />;
  const outcome = OUTCOMES.includes(result.outcome) ? t(`up.outcome.${result.outcome}` as StringKey) : result.outcome;
  return (
    <span className="test-result" role="status" data-testid="test-result" data-outcome={result.outcome}>
      <Badge tone={result.ok ? 'good' : 'bad'}>{outcome}</Badge> {t('up.testLine', { status: result.status ?? '—', ms: result.latencyMs })}
    </span>
  );
}

export function Credentials({ upstream, health, onChanged }: { upstream: Upstream; health: Record<string, CredentialState>; onChanged(): void }) {
  const { t } = useI18n();
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
                  <CredentialCells credential={credential} state={state} />
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

/** A credential's row cells for its label (with why it is off or unusable), its secret as shown, and routing's state. */
function CredentialCells({ credential, state }: { credential: Credential; state: CredentialState | undefined }) {
  const { t, formatDate } = useI18n();
  return (
    <>
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
    </>
  );
}

/** One credential being entered: its secret is not here (an uncontrolled password input named `secret-<key>` holds it until sent). */
export interface CredentialDraft {
  key: number;
  source: 'secret' | 'env';
  label: string;
  env: string;
  maxConcurrent: string;
}
let draftKeys = 0;
export const newCredential = (): CredentialDraft => ({ key: ++draftKeys, source: 'secret', label: '', env: '', maxConcurrent: '' });

export function CredentialFields({ draft, onChange, at, problem, local }: { draft: CredentialDraft; onChange(next: CredentialDraft): void; at: string; problem: ApiProblem | null; local: Record<string, ApiIssue> }) {
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
export function credentialInput(draft: CredentialDraft, form: HTMLFormElement, at: string, numbers: NumberReader): UpstreamCredentialInput {
  const input: UpstreamCredentialInput = {};
  if (draft.label.trim()) input.label = draft.label.trim();
  if (draft.source === 'secret') input.secret = (form.elements.namedItem(`secret-${draft.key}`) as HTMLInputElement | null)?.value ?? '';
  else input.env = draft.env.trim();
  const limit = numbers.int(at ? `${at}.maxConcurrent` : 'maxConcurrent', draft.maxConcurrent);
  if (limit !== undefined) input.maxConcurrent = limit;
  return input;
}

/** Empties every password input of a form: a secret sent is kept nowhere, not even in the field. */
export function clearSecrets(form: HTMLFormElement): void {
  for (const input of form.querySelectorAll<HTMLInputElement>('input[type="password"]')) input.value = '';
}

export function AddCredential({ upstream, onChanged }: { upstream: Upstream; onChanged(): void }) {
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

