import { useEffect, useId, useState, type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';
import type { ApiIssue, ApiProblem } from './client.js';
import { useI18n, type Translate } from './i18n.js';
import type { StringKey } from './strings.js';

/**
 * A USD amount exactly as the API gives it (a decimal string): digits grouped, at least two decimals,
 * never through a float.
 */
export function formatUsd(value: string | null | undefined): string {
  if (value == null || value === '') return '—';
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!match) return value;
  const [, sign, whole, fraction = ''] = match;
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${sign}$${grouped}.${trimmed}`;
}

export function Money({ usd }: { usd: string | null | undefined }) {
  return <span className="money">{formatUsd(usd)}</span>;
}

/** A page: its heading is the document title too. */
export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Baikal`;
  }, [title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

export function Card({ title, children, className }: { title?: string; children: ReactNode; className?: string }) {
  return (
    <div className={`card ${className ?? ''}`}>
      {title && <h2>{title}</h2>}
      {children}
    </div>
  );
}

export function Button({ kind = 'primary', busy, children, className, ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { kind?: 'primary' | 'secondary' | 'danger' | 'link'; busy?: boolean }) {
  return (
    <button type="button" {...rest} className={`button ${kind} ${className ?? ''}`} aria-busy={busy || undefined} disabled={busy || rest.disabled}>
      {children}
    </button>
  );
}

/** A field's error: the cabinet's own words, or an API issue (translated by issueText). */
type FieldProps = { label: string; error?: string | ApiIssue; hint?: string };

/**
 * An API field issue in the reader's language: by the field and the issue type (`issue.username.string_pattern_mismatch`),
 * else by the type alone with the limit the API's message names (`issue.string_too_short`: "At least {limit} characters"),
 * else the API's own (English) message.
 */
export function issueText(issue: ApiIssue, t: Translate): string {
  const field = String(issue.loc[issue.loc.length - 1]);
  for (const key of [`issue.${field}.${issue.type}`, `issue.${issue.type}`]) {
    if (!knownKeys.has(key)) continue;
    const limit = /-?\d+(?:\.\d+)?/.exec(issue.msg)?.[0];
    const text = t(key as StringKey, limit === undefined ? {} : { limit });
    if (!text.includes('{limit}')) return text;
  }
  return issue.msg;
}

/**
 * A labelled control with its error or hint: the control gets the id, `aria-invalid` and `aria-describedby`
 * that tie them together (inputs, selects and text areas alike).
 */
function FieldFrame({ label, error: problem, hint, control }: FieldProps & { control(props: { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string }): ReactNode }) {
  const id = useId();
  const { t } = useI18n();
  const error = typeof problem === 'object' ? issueText(problem, t) : problem;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {control({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': error || hint ? `${id}-note` : undefined })}
      {(error || hint) && (
        <p id={`${id}-note`} className={error ? 'field-error' : 'hint'}>
          {error ?? hint}
        </p>
      )}
    </div>
  );
}

export function Field({ label, error, hint, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  return <FieldFrame label={label} error={error} hint={hint} control={(wiring) => <input {...wiring} {...input} />} />;
}

export function TextAreaField({ label, error, hint, ...area }: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <FieldFrame label={label} error={error} hint={hint} control={(wiring) => <textarea {...wiring} {...area} />} />;
}

export function SelectField({ label, error, hint, options, ...select }: FieldProps & SelectHTMLAttributes<HTMLSelectElement> & { options: { value: string; label: string }[] }) {
  return (
    <FieldFrame
      label={label}
      error={error}
      hint={hint}
      control={(wiring) => (
        <select {...wiring} {...select}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    />
  );
}

/** An API problem in the reader's language when we know its reason, else the API's own words. */
/** A table's header row: a column header per label, and an actions column named for screen readers only. */
export function TableHead({ columns, actions = false }: { columns: string[]; actions?: boolean }) {
  const { t } = useI18n();
  return (
    <thead>
      <tr>
        {columns.map((label) => (
          <th key={label} scope="col">
            {label}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span className="visually-hidden">{t('common.actions')}</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

export function ProblemText({ problem }: { problem: ApiProblem | null }) {
  const { t } = useI18n();
  if (!problem) return null;
  const known = `error.${problem.reason ?? problem.code}` as StringKey;
  const text = knownKeys.has(known) ? t(known) : problem.message;
  return (
    <p className="alert error" role="alert">
      {text}
    </p>
  );
}
let knownKeys = new Set<string>();
/** Called once with the dictionary's keys, so ProblemText knows which reasons have a translation. */
export function registerKnownKeys(keys: string[]): void {
  knownKeys = new Set(keys);
}

export function Notice({ children, kind = 'info' }: { children: ReactNode; kind?: 'info' | 'success' | 'warning' }) {
  return (
    <p className={`alert ${kind}`} role="status">
      {children}
    </p>
  );
}

export function Loading() {
  const { t } = useI18n();
  return (
    <p className="loading" role="status" aria-live="polite">
      {t('common.loading')}
    </p>
  );
}

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (insecure origin): select the text for a manual copy instead.
      const range = document.createRange();
      const node = document.querySelector(`[data-copy="${CSS.escape(text)}"]`);
      if (node) {
        range.selectNodeContents(node);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2_000);
  };
  return (
    <Button kind="secondary" onClick={copy} aria-live="polite">
      {copied ? t('common.copied') : (label ?? t('common.copy'))}
    </Button>
  );
}

export function Code({ children }: { children: string }) {
  return (
    <pre className="code" tabIndex={0} data-copy={children}>
      <code>{children}</code>
    </pre>
  );
}

type Tone = 'good' | 'bad' | 'warn' | 'neutral';
const GOOD = new Set(['active', 'completed', 'paid', 'success', 'published']);
const BAD = new Set(['unavailable', 'failed', 'error', 'expired', 'cancelled']);
/** The colour of every status word the API uses (models, videos, invoices, usage events). */
export function toneOf(status: string): Tone {
  return GOOD.has(status) ? 'good' : BAD.has(status) ? 'bad' : 'warn';
}

/** A status word as a badge (its text is the status itself; colour only repeats it). */
export function Badge({ tone, children }: { tone: Tone; children: ReactNode }) {
  return <span className={`badge ${tone}`}>{children}</span>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}
