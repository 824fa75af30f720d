import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../../client.js';
import { graphql } from '../../gql/index.js';
import { useI18n } from '../../i18n.js';
import { Link } from '../../router.js';
import { Button, Card, Field, Loading, Notice, Page, ProblemText, SelectField, TextAreaField } from '../../ui.js';
import { ModelsDocument, PriceText } from '../models.js';
import { PricingPlans } from './plans.js';

const SetPricesDocument = graphql(`
  mutation SetModelPrices($modelId: ID!, $group: ID!, $prices: JSONObject!) {
    setModelPrices(modelId: $modelId, group: $group, prices: $prices) {
      id
      groups {
        id
        pricing {
          ...PriceFields
        }
      }
    }
  }
`);
const UpsertModelDocument = graphql(`
  mutation UpsertCatalogModel($model: JSONObject!) {
    upsertCatalogModel(model: $model) {
      id
    }
  }
`);

type PriceForm = { input: string; output: string; cacheRead: string; cacheWrite: string; perGeneration: string; perSecond: string };

/** The prices object setModelPrices takes: tokens, per generation or per second, by what the form holds. */
function pricesOf(form: PriceForm): Record<string, unknown> {
  if (form.perGeneration.trim()) return { perGeneration: form.perGeneration.trim() };
  if (form.perSecond.trim()) return { perSecond: form.perSecond.trim() };
  const tokens: Record<string, string> = { input: form.input.trim(), output: form.output.trim() };
  if (form.cacheRead.trim()) tokens.cacheRead = form.cacheRead.trim();
  if (form.cacheWrite.trim()) tokens.cacheWrite = form.cacheWrite.trim();
  return { tokens };
}

export function AdminCatalog() {
  const { t } = useI18n();
  const [{ data }, refetch] = useQuery({ query: ModelsDocument, requestPolicy: 'network-only' });
  const [pricesState, setPrices] = useMutation(SetPricesDocument);
  const [selection, setSelection] = useState({ modelId: '', group: '' });
  const [form, setForm] = useState<PriceForm | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  if (!data) return <Page title={t('nav.adminCatalog')}><Loading /></Page>;
  const models = data.catalogModels;
  const model = models.find((m) => m.id === selection.modelId) ?? models[0];
  const group = model?.groups.find((g) => g.id === selection.group) ?? model?.groups[0];
  const current: PriceForm = {
    input: group?.pricing.inputUsdPer1m ?? '',
    output: group?.pricing.outputUsdPer1m ?? '',
    cacheRead: group?.pricing.cacheReadUsdPer1m ?? '',
    cacheWrite: group?.pricing.cacheWriteUsdPer1m ?? '',
    perGeneration: group?.pricing.usdPerGeneration ?? '',
    perSecond: group?.pricing.usdPerSecond ?? '',
  };
  const values = form ?? current;
  const byTokens = !current.perGeneration && !current.perSecond;
  const problem = describeError(pricesState.error);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!model || !group) return;
    setSaved(null);
    const result = await setPrices({ modelId: model.id, group: group.id, prices: pricesOf(values) });
    if (result.data) {
      setSaved(t('admin.pricesSaved', { model: model.label, group: group.label }));
      setForm(null);
      refetch({ requestPolicy: 'network-only' });
    }
  };
  const field = (name: keyof PriceForm, label: string) => (
    <Field label={label} inputMode="decimal" value={values[name]} onChange={(e) => setForm({ ...values, [name]: e.target.value })} error={problem?.fields[name]} />
  );

  return (
    <Page title={t('nav.adminCatalog')}>
      <Card title={t('admin.pricesTitle')}>
        <form onSubmit={submit} noValidate className="form-grid">
          <SelectField label={t('models.model')} value={model?.id ?? ''} onChange={(e) => { setSelection({ modelId: e.target.value, group: '' }); setForm(null); }} options={models.map((m) => ({ value: m.id, label: `${m.label} (${m.id})` }))} />
          <SelectField label={t('keys.group')} value={group?.id ?? ''} onChange={(e) => { setSelection({ ...selection, modelId: model?.id ?? '', group: e.target.value }); setForm(null); }} options={(model?.groups ?? []).map((g) => ({ value: g.id, label: g.label }))} />
          <p>
            {t('admin.currentPrice')} <PriceText pricing={group?.pricing} />
          </p>
          <ProblemText problem={problem} />
          {byTokens ? (
            <>
              {field('input', t('admin.inputPrice'))}
              {field('output', t('admin.outputPrice'))}
              {field('cacheRead', t('admin.cacheReadPrice'))}
              {field('cacheWrite', t('admin.cacheWritePrice'))}
            </>
          ) : current.perGeneration ? (
            field('perGeneration', t('admin.perGenerationPrice'))
          ) : (
            field('perSecond', t('admin.perSecondPrice'))
          )}
          <Button type="submit" busy={pricesState.fetching}>
            {t('common.save')}
          </Button>
        </form>
        {saved && (
          <Notice kind="success">
            {saved} <Link to="/app/models">{t('admin.seePublic')}</Link>
          </Notice>
        )}
      </Card>
      <ModelJson onSaved={() => refetch({ requestPolicy: 'network-only' })} />
      <PricingPlans />
    </Page>
  );
}

/** A model added or replaced whole, as the catalog's JSON. */
function ModelJson({ onSaved }: { onSaved(): void }) {
  const { t } = useI18n();
  const [modelState, upsertModel] = useMutation(UpsertModelDocument);
  const [modelJson, setModelJson] = useState('');
  const [jsonError, setJsonError] = useState<string | null>(null);
  const submitModel = async (event: FormEvent) => {
    event.preventDefault();
    setJsonError(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(modelJson);
    } catch (error) {
      return setJsonError(t('admin.badJson', { reason: (error as Error).message }));
    }
    if ((await upsertModel({ model: parsed as Record<string, unknown> })).data) {
      setModelJson('');
      onSaved();
    }
  };

  return (
    <Card title={t('admin.modelJsonTitle')}>
      <form onSubmit={submitModel} noValidate>
        <p className="hint">{t('admin.modelJsonHint')}</p>
        {jsonError && (
          <p className="alert error" role="alert">
            {jsonError}
          </p>
        )}
        <ProblemText problem={describeError(modelState.error)} />
        <TextAreaField label={t('admin.modelJson')} rows={10} spellCheck={false} value={modelJson} onChange={(e) => setModelJson(e.target.value)} />
        <Button type="submit" busy={modelState.fetching} disabled={!modelJson.trim()}>
          {t('common.save')}
        </Button>
      </form>
    </Card>
  );
}
