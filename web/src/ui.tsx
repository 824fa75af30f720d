import { useEffect, useId, useState, type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes } from 'react';
import type { ApiProblem } from './client.js';
import { useI18n } from './i18n.js';
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

type FieldProps = { label: string; error?: string; hint?: string };

export function Field({ label, error, hint, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-invalid={error ? true : undefined} aria-describedby={error || hint ? `${id}-note` : undefined} {...input} />
      {(error || hint) && (
        <p id={`${id}-note`} className={error ? 'field-error' : 'hint'}>
          {error ?? hint}
        </p>
      )}
    </div>
  );
}

export function SelectField({ label, error, hint, options, ...select }: FieldProps & SelectHTMLAttributes<HTMLSelectElement> & { options: { value: string; label: string }[] }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} aria-invalid={error ? true : undefined} aria-describedby={error || hint ? `${id}-note` : undefined} {...select}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {(error || hint) && (
        <p id={`${id}-note`} className={error ? 'field-error' : 'hint'}>
          {error ?? hint}
        </p>
      )}
    </div>
  );
}

/** An API problem in the reader's language when we know its reason, else the API's own words. */
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

/** A status word as a badge (its text is the status itself; colour only repeats it). */
export function Badge({ tone, children }: { tone: 'good' | 'bad' | 'warn' | 'neutral'; children: ReactNode }) {
  return <span className={`badge ${tone}`}>{children}</span>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}
