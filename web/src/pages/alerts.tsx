import { useEffect, useState, type ReactNode } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError, type ApiProblem } from '../client.js';
import { graphql } from '../gql/index.js';
import type { AlertSettingsPageQuery } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { Link } from '../router.js';
import { Button, Card, Field, issueText, Loading, Notice, Page, ProblemText, SelectField } from '../ui.js';

const AlertSettingsPageDocument = graphql(`
  query AlertSettingsPage {
    alertSettings {
      language
      email
      emailVerified
      messengerLinked
      messengerAvailable
      balanceBelow { amountUsd channels }
      spendTodayAbove { amountUsd channels }
      keyCapShares { keyId percent channels }
      invoicePaid { channels }
      videoFinished { channels }
    }
    keys {
      id
      label
      monthlySpendCap
    }
  }
`);
const UpdateAlertSettingsDocument = graphql(`
  mutation UpdateAlertSettings($input: AlertSettingsInput!) {
    updateAlertSettings(input: $input) {
      language
    }
  }
`);

type Settings = AlertSettingsPageQuery['alertSettings'];
type Channel = 'email' | 'messenger';

/** One rule as the form edits it: on or off, its amount or percent (text, as typed), its channels. */
interface RuleDraft {
  on: boolean;
  value: string;
  channels: Channel[];
}
interface ShareDraft {
  keyId: string;
  value: string;
  channels: Channel[];
}
interface Draft {
  language: string;
  balanceBelow: RuleDraft;
  spendTodayAbove: RuleDraft;
  invoicePaid: RuleDraft;
  videoFinished: RuleDraft;
  keyCapShares: ShareDraft[];
}

/** The channels a new rule starts with: the ones that reach the account now. */
function defaultChannels(s: Settings): Channel[] {
  const reachable: Channel[] = [];
  if (s.emailVerified) reachable.push('email');
  if (s.messengerLinked && s.messengerAvailable) reachable.push('messenger');
  return reachable.length ? reachable : ['email'];
}

function draftOf(s: Settings): Draft {
  const channels = defaultChannels(s);
  const rule = (saved: { amountUsd?: string; channels: string[] } | null | undefined): RuleDraft =>
    saved ? { on: true, value: saved.amountUsd ?? '', channels: saved.channels as Channel[] } : { on: false, value: '', channels };
  return {
    language: s.language,
    balanceBelow: rule(s.balanceBelow),
    spendTodayAbove: rule(s.spendTodayAbove),
    invoicePaid: rule(s.invoicePaid),
    videoFinished: rule(s.videoFinished),
    keyCapShares: s.keyCapShares.map((share) => ({ keyId: share.keyId ?? '', value: String(share.percent), channels: share.channels as Channel[] })),
  };
}

function inputOf(d: Draft) {
  const amount = (r: RuleDraft) => (r.on ? { amountUsd: r.value.trim(), channels: r.channels } : null);
  const event = (r: RuleDraft) => (r.on ? { channels: r.channels } : null);
  const percent = (text: string) => (/^\s*\d+\s*$/.test(text) ? Number(text) : 0);
  return {
    language: d.language,
    balanceBelow: amount(d.balanceBelow),
    spendTodayAbove: amount(d.spendTodayAbove),
    invoicePaid: event(d.invoicePaid),
    videoFinished: event(d.videoFinished),
    keyCapShares: d.keyCapShares.map((share) => ({ keyId: share.keyId || null, percent: percent(share.value), channels: share.channels })),
  };
}

/** The customer's alerts: each rule, its amount or percent and channels, and what keeps a channel from reaching them. */
export function Alerts() {
  const { t, language } = useI18n();
  const [{ data }, refetch] = useQuery({ query: AlertSettingsPageDocument, requestPolicy: 'network-only' });
  const [saveState, save] = useMutation(UpdateAlertSettingsDocument);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saved, setSaved] = useState(false);
  const settings = data?.alertSettings;
  useEffect(() => {
    if (settings) setDraft({ ...draftOf(settings), language: settings.balanceBelow || settings.spendTodayAbove || settings.invoicePaid || settings.videoFinished || settings.keyCapShares.length ? settings.language : language });
  }, [settings, language]);
  if (!settings || !draft || !data) return <Page title={t('nav.alerts')}><Loading /></Page>;
  const problem = describeError(saveState.error);
  const set = (change: Partial<Draft>) => {
    setSaved(false);
    setDraft({ ...draft, ...change });
  };
  const submit = async () => {
    const result = await save({ input: inputOf(draft) });
    if (result.data) {
      setSaved(true);
      refetch({ requestPolicy: 'network-only' });
    }
  };
  return (
    <Page title={t('nav.alerts')}>
      <p>{t('alerts.intro')}</p>
      <ChannelNotices settings={settings} />
      <form noValidate onSubmit={(event) => { event.preventDefault(); void submit(); }} data-testid="alerts-form">
        <ProblemText problem={problem?.code === 'BAD_USER_INPUT' ? null : problem} />
        <Card>
          <SelectField label={t('alerts.language')} value={draft.language} onChange={(e) => set({ language: e.target.value })} options={[{ value: 'en', label: 'English' }, { value: 'ru', label: 'Русский' }]} />
        </Card>
        <RuleCard title={t('alerts.balanceBelow')} field="balanceBelow" rule={draft.balanceBelow} amount problem={problem} onChange={(r) => set({ balanceBelow: r })} />
        <RuleCard title={t('alerts.spendTodayAbove')} field="spendTodayAbove" rule={draft.spendTodayAbove} amount problem={problem} onChange={(r) => set({ spendTodayAbove: r })} />
        <KeyShares shares={draft.keyCapShares} keys={data.keys} problem={problem} defaults={defaultChannels(settings)} onChange={(keyCapShares) => set({ keyCapShares })} />
        <RuleCard title={t('alerts.invoicePaid')} field="invoicePaid" rule={draft.invoicePaid} problem={problem} onChange={(r) => set({ invoicePaid: r })} />
        <RuleCard title={t('alerts.videoFinished')} field="videoFinished" rule={draft.videoFinished} problem={problem} onChange={(r) => set({ videoFinished: r })} />
        <Button type="submit" busy={saveState.fetching}>{t('alerts.save')}</Button>
        {saved && <Notice kind="success">{t('alerts.saved')}</Notice>}
      </form>
    </Page>
  );
}

function ChannelNotices({ settings }: { settings: Settings }) {
  const { t } = useI18n();
  const notes: string[] = [];
  if (!settings.email) notes.push(t('alerts.noEmail'));
  else if (!settings.emailVerified) notes.push(t('alerts.emailUnverified'));
  if (!settings.messengerAvailable) notes.push(t('alerts.messengerOff'));
  else if (!settings.messengerLinked) notes.push(t('alerts.messengerUnlinked'));
  if (!notes.length) return null;
  return (
    <Notice kind="warning">
      {notes.map((note) => <span key={note}>{note} </span>)}
      <Link to="/app/profile">{t('alerts.fixOnProfile')}</Link>
    </Notice>
  );
}

function Channels({ value, onChange, error }: { value: Channel[]; onChange(channels: Channel[]): void; error?: string | null }) {
  const { t } = useI18n();
  const toggle = (channel: Channel, on: boolean) => onChange(on ? [...value.filter((c) => c !== channel), channel] : value.filter((c) => c !== channel));
  return (
    <fieldset className="channels">
      <legend>{t('alerts.channels')}</legend>
      {(['email', 'messenger'] as const).map((channel) => (
        <label key={channel} className="check">
          <input type="checkbox" checked={value.includes(channel)} onChange={(e) => toggle(channel, e.target.checked)} aria-invalid={error ? true : undefined} /> {t(`alerts.${channel}`)}
        </label>
      ))}
      {error && <p className="field-error">{error}</p>}
    </fieldset>
  );
}

/** The first issue the API gave at `path` (e.g. `balanceBelow.amountUsd`), in the reader's language. */
function useIssue(problem: ApiProblem | null) {
  const { t } = useI18n();
  return (path: string): string | null => {
    const issue = problem?.paths[path] ?? Object.entries(problem?.paths ?? {}).find(([loc]) => loc.startsWith(`${path}.`))?.[1];
    return issue ? issueText(issue, t) : null;
  };
}

function RuleCard(props: { title: string; field: string; rule: RuleDraft; amount?: boolean; problem: ApiProblem | null; onChange(rule: RuleDraft): void }) {
  const { t } = useI18n();
  const issue = useIssue(props.problem);
  const { rule, onChange } = props;
  return (
    <Card title={props.title}>
      <div data-rule={props.field}>
        <label className="check">
          <input type="checkbox" checked={rule.on} onChange={(e) => onChange({ ...rule, on: e.target.checked })} /> {t('alerts.on')}
        </label>
        {rule.on && (
          <>
            {props.amount && <Field label={t('alerts.amount')} inputMode="decimal" value={rule.value} onChange={(e) => onChange({ ...rule, value: e.target.value })} error={issue(`${props.field}.amountUsd`) ?? undefined} />}
            <Channels value={rule.channels} onChange={(channels) => onChange({ ...rule, channels })} error={issue(`${props.field}.channels`)} />
          </>
        )}
      </div>
    </Card>
  );
}

function KeyShares(props: { shares: ShareDraft[]; keys: { id: string; label?: string | null; monthlySpendCap?: string | null }[]; defaults: Channel[]; problem: ApiProblem | null; onChange(shares: ShareDraft[]): void }) {
  const { t } = useI18n();
  const issue = useIssue(props.problem);
  const { shares, onChange } = props;
  const options = [{ value: '', label: t('alerts.allKeys') }, ...props.keys.map((k) => ({ value: k.id, label: `${k.label ?? k.id}${k.monthlySpendCap ? ` ($${k.monthlySpendCap})` : ''}` }))];
  const update = (i: number, change: Partial<ShareDraft>) => onChange(shares.map((share, j) => (j === i ? { ...share, ...change } : share)));
  const rows: ReactNode[] = shares.map((share, i) => (
    <div key={i} className="row" data-share={i}>
      <SelectField label={t('alerts.key')} value={share.keyId} options={options} onChange={(e) => update(i, { keyId: e.target.value })} error={issue(`keyCapShares.${i}.keyId`) ?? undefined} />
      <Field label={t('alerts.percent')} inputMode="numeric" value={share.value} onChange={(e) => update(i, { value: e.target.value })} error={issue(`keyCapShares.${i}.percent`) ?? undefined} />
      <Channels value={share.channels} onChange={(channels) => update(i, { channels })} error={issue(`keyCapShares.${i}.channels`)} />
      <Button kind="link" onClick={() => onChange(shares.filter((_, j) => j !== i))}>{t('alerts.remove')}</Button>
    </div>
  ));
  return (
    <Card title={t('alerts.keyShares')}>
      {rows}
      <Button kind="secondary" onClick={() => onChange([...shares, { keyId: '', value: '80', channels: props.defaults }])}>{t('alerts.addKey')}</Button>
    </Card>
  );
}
