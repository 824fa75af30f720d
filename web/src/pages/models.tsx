import { useMemo, useState } from 'react';
import { useQuery } from 'urql';
import { graphql } from '../gql/index.js';
import type { ModelsQuery, PriceFieldsFragment } from '../gql/graphql.js';
import { useI18n } from '../i18n.js';
import { Badge, Card, Empty, Field, Loading, Money, Page, SelectField, TableHead } from '../ui.js';

/** Every price a model has in a group (tokens, per generation or per second), as the API's decimal strings. */
graphql(`
  fragment PriceFields on Pricing {
    inputUsdPer1m
    outputUsdPer1m
    cacheReadUsdPer1m
    cacheWriteUsdPer1m
    usdPerGeneration
    usdPerSecond
  }
`);

export const ModelsDocument = graphql(`
  query Models {
    catalogModels {
      id
      label
      family
      kind
      endpoints
      contextWindow
      maxOutputTokens
      video
      capabilities {
        streaming
        tools
        vision
      }
      official {
        ...PriceFields
      }
      groups {
        id
        label
        pricingPlan
        pricing {
          ...PriceFields
        }
      }
    }
  }
`);

type Pricing = PriceFieldsFragment;

/** A price line: per million tokens, per generation or per second, whichever the model is sold by. */
export function PriceText({ pricing }: { pricing: Partial<Pricing> | null | undefined }) {
  const { t } = useI18n();
  if (!pricing) return <>—</>;
  if (pricing.inputUsdPer1m || pricing.outputUsdPer1m)
    return (
      <>
        <Money usd={pricing.inputUsdPer1m} /> / <Money usd={pricing.outputUsdPer1m} /> {t('models.perMillion')}
      </>
    );
  if (pricing.usdPerGeneration)
    return (
      <>
        <Money usd={pricing.usdPerGeneration} /> {t('models.perGeneration')}
      </>
    );
  if (pricing.usdPerSecond)
    return (
      <>
        <Money usd={pricing.usdPerSecond} /> {t('models.perSecond')}
      </>
    );
  return <>—</>;
}

export function Models() {
  const { t } = useI18n();
  const [{ data, fetching }] = useQuery({ query: ModelsDocument });
  const [filter, setFilter] = useState({ text: '', family: '', capability: '' });
  const models = data?.catalogModels ?? [];
  const familyOptions = useMemo(() => [...new Set(models.map((m) => m.family))], [models]);
  const shown = models.filter(
    (m) =>
      (!filter.text || `${m.id} ${m.label}`.toLowerCase().includes(filter.text.toLowerCase())) &&
      (!filter.family || m.family === filter.family) &&
      (!filter.capability || m.capabilities[filter.capability as 'tools' | 'vision' | 'streaming'] || m.kind === filter.capability),
  );
  return (
    <Page title={t('nav.models')}>
      <Card>
        <div className="form-grid filters" role="search">
          <Field label={t('models.search')} type="search" value={filter.text} onChange={(e) => setFilter({ ...filter, text: e.target.value })} />
          <SelectField label={t('keys.family')} value={filter.family} onChange={(e) => setFilter({ ...filter, family: e.target.value })} options={[{ value: '', label: t('common.all') }, ...familyOptions.map((f) => ({ value: f, label: f }))]} />
          <SelectField
            label={t('models.capability')}
            value={filter.capability}
            onChange={(e) => setFilter({ ...filter, capability: e.target.value })}
            options={[
              { value: '', label: t('common.all') },
              { value: 'tools', label: t('models.tools') },
              { value: 'vision', label: t('models.vision') },
              { value: 'streaming', label: t('models.streaming') },
              { value: 'video', label: t('models.video') },
              { value: 'image', label: t('models.image') },
            ]}
          />
        </div>
      </Card>
      {!data && fetching ? (
        <Loading />
      ) : !shown.length ? (
        <Empty>{t('models.none')}</Empty>
      ) : (
        <ModelTable models={shown} />
      )}
    </Page>
  );
}

/** The models shown, with what they can do, their endpoints, their prices per group and the official ones. */
function ModelTable({ models }: { models: ModelsQuery['catalogModels'] }) {
  const { t, formatNumber, count } = useI18n();
  return (
    <div className="table-wrap">
      <table className="table" data-testid="models-table">
        <caption className="visually-hidden">{t('nav.models')}</caption>
        <TableHead columns={[t('models.model'), t('keys.family'), t('models.capabilities'), t('models.endpoints'), t('models.prices'), t('models.official')]} />
        <tbody>
          {models.map((m) => (
            <tr key={m.id} data-model={m.id}>
              <th scope="row">
                {m.label}
                <br />
                <code>{m.id}</code>
                {m.contextWindow ? <span className="hint"> · {t('models.context', { tokens: count('token', m.contextWindow) })}</span> : null}
              </th>
              <td>{m.family}</td>
              <td>
                <span className="badges">
                  <Badge tone="neutral">{m.kind}</Badge>
                  {m.capabilities.streaming && <Badge tone="neutral">{t('models.streaming')}</Badge>}
                  {m.capabilities.tools && <Badge tone="neutral">{t('models.tools')}</Badge>}
                  {m.capabilities.vision && <Badge tone="neutral">{t('models.vision')}</Badge>}
                </span>
              </td>
              <td>
                {m.endpoints.map((e) => (
                  <code key={e} className="endpoint">
                    {e}
                  </code>
                ))}
              </td>
              <td>
                <ul className="plain">
                  {m.groups.map((g) => (
                    <li key={g.id} data-group={g.id}>
                      <strong>{g.label}</strong>: <PriceText pricing={g.pricing} />
                    </li>
                  ))}
                </ul>
              </td>
              <td>
                <PriceText pricing={m.official} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
