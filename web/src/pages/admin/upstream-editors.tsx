import { useState, type FormEvent } from 'react';
import type { ApiIssue } from '../../client.js';
import { useI18n } from '../../i18n.js';
import type { StringKey } from '../../strings.js';
import { Button, Empty, Field, Notice, SelectField } from '../../ui.js';
import { decimalOrNull, FormProblem, issueAt, NumberReader, useAction } from './upstream-kit.js';
import { SetPricesDocument, SetRoutesDocument, type CatalogModel, type Upstream } from './upstream-api.js';

/** The admin Upstreams page's editors of an upstream's routes (from the catalog) and of its own prices. */

interface RouteDraft {
  model: string;
  group: string;
  upstreamModel: string;
  weight: string;
  priority: string;
  enabled: boolean;
}

export function modelOptions(models: CatalogModel[], current: string) {
  const options = models.map((m) => ({ value: m.id, label: m.id }));
  if (current && !models.some((m) => m.id === current)) options.unshift({ value: current, label: current });
  return options;
}

export function RoutesEditor({ upstream, models, onChanged }: { upstream: Upstream; models: CatalogModel[]; onChanged(): void }) {
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

export const PRICE_FIELDS = ['inputPer1m', 'outputPer1m', 'cacheReadPer1m', 'cacheWritePer1m', 'perImage', 'perVideoSecond'] as const;
export type PriceField = (typeof PRICE_FIELDS)[number];
export type PriceDraft = { model: string } & Record<PriceField, string>;
export const PRICE_LABELS: Record<PriceField, StringKey> = {
  inputPer1m: 'admin.inputPrice',
  outputPer1m: 'admin.outputPrice',
  cacheReadPer1m: 'admin.cacheReadPrice',
  cacheWritePer1m: 'admin.cacheWritePrice',
  perImage: 'up.perImage',
  perVideoSecond: 'up.perVideoSecond',
};

export function PricesEditor({ upstream, models, onChanged }: { upstream: Upstream; models: CatalogModel[]; onChanged(): void }) {
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

