import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../../client.js';
import { graphql } from '../../gql/index.js';
import { useI18n } from '../../i18n.js';
import { Button, Card, Field, Notice, ProblemText, SelectField, TableHead, TextAreaField } from '../../ui.js';

const PlansDocument = graphql(`
  query AdminPricingPlans {
    adminPricingPlans {
      id
      label
      public
      multiplier
      overrides
    }
  }
`);
const UpsertPlanDocument = graphql(`
  mutation AdminUpsertPricingPlan($input: PricingPlanInput!) {
    upsertPricingPlan(input: $input) {
      id
    }
  }
`);

const EMPTY = { id: '', label: '', multiplier: '1', visibility: 'public', overrides: '' };

/**
 * Pricing plans: a multiplier on every public price and per-model prices that win over it. A private plan
 * is assigned by the operator and shown to its customers as `custom`. The API validates the whole catalog
 * with the change; its issues appear under the fields.
 */
export function PricingPlans() {
  const { t } = useI18n();
  const [{ data }, refetch] = useQuery({ query: PlansDocument, requestPolicy: 'network-only' });
  const [state, upsert] = useMutation(UpsertPlanDocument);
  const [form, setForm] = useState(EMPTY);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const problem = describeError(state.error);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setJsonError(null);
    setSaved(null);
    let overrides: Record<string, unknown> = {};
    try {
      if (form.overrides.trim()) overrides = JSON.parse(form.overrides) as Record<string, unknown>;
    } catch (error) {
      return setJsonError(t('admin.badJson', { reason: (error as Error).message }));
    }
    const result = await upsert({ input: { id: form.id.trim(), label: form.label.trim(), multiplier: form.multiplier.trim() || undefined, public: form.visibility === 'public', overrides } });
    if (result.data) {
      setSaved(t('admin.planSaved', { plan: form.id.trim() }));
      setForm(EMPTY);
      refetch({ requestPolicy: 'network-only' });
    }
  };

  return (
    <Card title={t('admin.plansTitle')}>
      <p className="hint">{t('admin.plansHint')}</p>
      <table className="table compact" data-testid="pricing-plans">
        <TableHead columns={[t('admin.planId'), t('admin.planLabel'), t('admin.planMultiplier'), t('admin.planVisibility'), t('admin.planOverrideCount')]} actions />
        <tbody>
          {data?.adminPricingPlans.map((plan) => (
            <tr key={plan.id} data-plan={plan.id}>
              <td>{plan.id}</td>
              <td>{plan.label}</td>
              <td>×{plan.multiplier}</td>
              <td>{plan.public ? t('admin.planPublic') : t('admin.planPrivate')}</td>
              <td>{Object.keys(plan.overrides as object).length}</td>
              <td>
                <Button
                  kind="link"
                  aria-label={t('admin.editPlan', { plan: plan.id })}
                  onClick={() => setForm({ id: plan.id, label: plan.label, multiplier: plan.multiplier, visibility: plan.public ? 'public' : 'private', overrides: Object.keys(plan.overrides as object).length ? JSON.stringify(plan.overrides, null, 2) : '' })}
                >
                  {t('admin.edit')}
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={submit} noValidate className="form-grid">
        <ProblemText problem={problem} />
        <Field label={t('admin.planId')} value={form.id} onChange={(e) => setForm({ ...form, id: e.target.value })} error={problem?.fields.id} />
        <Field label={t('admin.planLabel')} value={form.label} onChange={(e) => setForm({ ...form, label: e.target.value })} error={problem?.fields.label} />
        <Field label={t('admin.planMultiplier')} inputMode="decimal" value={form.multiplier} onChange={(e) => setForm({ ...form, multiplier: e.target.value })} error={problem?.fields.multiplier} />
        <SelectField label={t('admin.planVisibility')} value={form.visibility} onChange={(e) => setForm({ ...form, visibility: e.target.value })} options={[{ value: 'public', label: t('admin.planPublic') }, { value: 'private', label: t('admin.planPrivate') }]} />
        <TextAreaField label={t('admin.planOverrides')} rows={4} spellCheck={false} placeholder='{"gen-5.6-luna": {"tokens": {"input": "0.01", "output": "0.03"}}}' value={form.overrides} onChange={(e) => setForm({ ...form, overrides: e.target.value })} error={jsonError ?? problem?.fields.overrides} />
        <Button type="submit" busy={state.fetching} disabled={!form.id.trim()}>
          {t('common.save')}
        </Button>
      </form>
      {saved && <Notice kind="success">{saved}</Notice>}
    </Card>
  );
}
