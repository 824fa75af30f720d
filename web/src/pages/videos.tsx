import { useMemo, useState, type FormEvent } from 'react';
import { useQuery, useSubscription } from 'urql';
import { graphql } from '../gql/index.js';
import type { VideoTasksQuery } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { KeyPicker } from '../key-picker.js';
import { useSession } from '../session.js';
import { Badge, Button, Card, Empty, Field, Page, SelectField, toneOf } from '../ui.js';
import { ModelsDocument } from './models.js';

const VideoTasksDocument = graphql(`
  query VideoTasks {
    videoTasks(limit: 20) {
      ...VideoTaskFields
    }
  }
`);
graphql(`
  fragment VideoTaskFields on VideoTask {
    id
    model
    status
    progress
    seconds
    createdAt
    completedAt
    playbackUrl
    error {
      code
      message
    }
  }
`);
const VideoTaskUpdatedDocument = graphql(`
  subscription VideoTaskUpdated {
    videoTaskUpdated {
      ...VideoTaskFields
    }
  }
`);

/** A video model's rules as the catalog states them (SPEC.md 4.8): the form offers and checks exactly these. */
interface VideoRules {
  modes: string[];
  seconds: { min: number; max: number; default?: number };
  resolutions: string[];
  ratios: string[];
}

function rulesOf(video: unknown): VideoRules | null {
  const v = video as Partial<VideoRules> | null;
  if (!v?.seconds || !v.resolutions || !v.ratios) return null;
  return { modes: v.modes ?? [], seconds: v.seconds, resolutions: v.resolutions, ratios: v.ratios };
}

interface Issue {
  loc: (string | number)[];
  msg: string;
}

/** The catalog's rules, checked here so the form says what is wrong before anything is reserved. */
function localIssues({ t, count }: Pick<ReturnType<typeof useI18n>, 't' | 'count'>, secret: string, prompt: string, seconds: string, rules: VideoRules | null): Issue[] {
  const found: Issue[] = [];
  if (!secret) found.push({ loc: ['key'], msg: t('video.needKey') });
  if (!prompt.trim()) found.push({ loc: ['prompt'], msg: t('video.needPrompt') });
  const n = Number(seconds);
  if (rules && (!Number.isInteger(n) || n < rules.seconds.min || n > rules.seconds.max)) found.push({ loc: ['seconds'], msg: t('video.secondsRange', { min: rules.seconds.min, max: count('toSeconds', rules.seconds.max) }) });
  return found;
}

/**
 * Submits a video job with the chosen key (never the session cookie). Null when accepted; else the API's issues (by
 * field) and its message, or `failed` when it gave none.
 */
async function postVideo(secret: string, job: object, failed: string): Promise<{ issues: Issue[]; failure: string } | null> {
  const response = await fetch('/v1/videos', {
    method: 'POST',
    credentials: 'omit',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(job),
  });
  const body = (await response.json().catch(() => ({}))) as { error?: { message?: string; issues?: Issue[] }; detail?: unknown };
  if (response.ok) return null;
  const detail = Array.isArray(body.detail) ? (body.detail as Issue[]) : [];
  return { issues: detail.map((issue) => ({ loc: issue.loc.slice(-1), msg: issue.msg })), failure: body.error?.message ?? (typeof body.detail === 'string' ? body.detail : failed) };
}

export function Videos() {
  const i18n = useI18n();
  const { t, count } = i18n;
  const { keyring } = useSession();
  const [models] = useQuery({ query: ModelsDocument });
  const [tasks, refetch] = useQuery({ query: VideoTasksDocument, requestPolicy: 'network-only' });
  // Live progress: each update replaces the task in place; a new task (submitted elsewhere) reloads the list.
  const [live] = useSubscription({ query: VideoTaskUpdatedDocument }, (known: Record<string, unknown> = {}, event) => ({ ...known, [event.videoTaskUpdated.id]: event.videoTaskUpdated }));
  const videoModels = useMemo(() => (models.data?.catalogModels ?? []).filter((m) => m.kind === 'video' && rulesOf(m.video)), [models.data]);
  const [secret, setSecret] = useState(keyring[0]?.secret ?? '');
  const [form, setForm] = useState({ model: '', prompt: '', seconds: '', resolution: '', ratio: '' });
  const [issues, setIssues] = useState<Issue[]>([]);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const model = videoModels.find((m) => m.id === form.model) ?? videoModels[0];
  const rules = model ? rulesOf(model.video) : null;
  const seconds = form.seconds || String(rules?.seconds.default ?? rules?.seconds.min ?? '');
  const resolution = form.resolution && rules?.resolutions.includes(form.resolution) ? form.resolution : (rules?.resolutions[0] ?? '');
  const ratio = form.ratio && rules?.ratios.includes(form.ratio) ? form.ratio : (rules?.ratios[0] ?? '');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setFailure(null);
    const found = localIssues(i18n, secret, form.prompt, seconds, rules);
    setIssues(found);
    if (found.length || !model) return;
    setBusy(true);
    try {
      const refused = await postVideo(secret, { model: model.id, prompt: form.prompt.trim(), seconds: Number(seconds), resolution, ratio }, t('video.failed'));
      if (refused) {
        setIssues(refused.issues);
        setFailure(refused.failure);
        return;
      }
      setForm({ ...form, prompt: '' });
      refetch({ requestPolicy: 'network-only' });
    } finally {
      setBusy(false);
    }
  };
  const issueFor = (field: string) => issues.find((issue) => issue.loc[issue.loc.length - 1] === field)?.msg;
  const list = (tasks.data?.videoTasks ?? []).map((task) => ({ ...task, ...((live.data as Record<string, typeof task> | undefined)?.[task.id] ?? {}) }));

  return (
    <Page title={t('nav.videos')}>
      <Card title={t('video.new')}>
        <form onSubmit={submit} noValidate className="form-grid">
          {failure && (
            <p className="alert error" role="alert">
              {failure}
            </p>
          )}
          <KeyPicker value={secret} onChange={setSecret} />
          {issueFor('key') && <p className="field-error">{issueFor('key')}</p>}
          <SelectField label={t('models.model')} value={model?.id ?? ''} onChange={(e) => setForm({ ...form, model: e.target.value, seconds: '' })} options={videoModels.map((m) => ({ value: m.id, label: m.label }))} />
          <Field label={t('video.prompt')} value={form.prompt} maxLength={4000} onChange={(e) => setForm({ ...form, prompt: e.target.value })} error={issueFor('prompt')} />
          <Field label={t('video.seconds')} type="number" min={rules?.seconds.min} max={rules?.seconds.max} value={seconds} onChange={(e) => setForm({ ...form, seconds: e.target.value })} error={issueFor('seconds')} hint={rules ? t('video.secondsRange', { min: rules.seconds.min, max: count('toSeconds', rules.seconds.max) }) : undefined} />
          <SelectField label={t('video.resolution')} value={resolution} onChange={(e) => setForm({ ...form, resolution: e.target.value })} options={(rules?.resolutions ?? []).map((r) => ({ value: r, label: r }))} error={issueFor('resolution')} />
          <SelectField label={t('video.ratio')} value={ratio} onChange={(e) => setForm({ ...form, ratio: e.target.value })} options={(rules?.ratios ?? []).map((r) => ({ value: r, label: r }))} error={issueFor('ratio')} />
          <Button type="submit" busy={busy}>
            {t('video.submit')}
          </Button>
        </form>
      </Card>
      <Card title={t('video.tasks')}>
        {!list.length ? (
          <Empty>{t('video.none')}</Empty>
        ) : (
          <TaskList tasks={list} />
        )}
      </Card>
    </Page>
  );
}

/** The account's video tasks: progress while they run, the error, or the player once complete. */
function TaskList({ tasks }: { tasks: VideoTasksQuery['videoTasks'] }) {
  const { t, formatDate } = useI18n();
  return (
    <ul className="tasks">
      {tasks.map((task) => (
        <li key={task.id} data-task={task.id} data-status={task.status}>
          <div className="row">
            <strong>{task.model}</strong>
            <Badge tone={toneOf(task.status)}>{t(`video.status.${task.status}` as 'video.status.queued')}</Badge>
            <span className="hint">
              {formatDate(task.createdAt)} · {t('video.secondsShort', { seconds: task.seconds })}
            </span>
          </div>
          {(task.status === 'queued' || task.status === 'in_progress') && (
            <progress max={100} value={task.progress} aria-label={t('video.progress', { model: task.model })}>
              {task.progress}%
            </progress>
          )}
          {task.error && <p className="field-error">{task.error.message}</p>}
          {task.status === 'completed' && task.playbackUrl && (
            <video controls preload="metadata" src={task.playbackUrl} aria-label={t('video.player', { model: task.model })}>
              <track kind="captions" />
            </video>
          )}
        </li>
      ))}
    </ul>
  );
}
