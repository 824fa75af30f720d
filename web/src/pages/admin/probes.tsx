import { useQuery } from 'urql';
import { useI18n } from '../../i18n.js';
import { Badge, Loading, Page, TableHead, toneOf } from '../../ui.js';
import { StatusDocument } from '../status.js';

/** The status monitor's probes, model by model: last check, current state, the changes it recorded. */
export function AdminProbes() {
  const { t, formatDate } = useI18n();
  const [{ data }] = useQuery({ query: StatusDocument, requestPolicy: 'network-only' });
  if (!data) return <Page title={t('nav.adminProbes')}><Loading /></Page>;
  return (
    <Page title={t('nav.adminProbes')}>
      <div className="table-wrap">
        <table className="table">
          <TableHead columns={[t('keys.group'), t('models.model'), t('usage.status'), t('admin.lastCheck'), t('admin.changes24h')]} />
          <tbody>
            {data.serviceStatus.groups.flatMap((group) =>
              group.models.map((model) => (
                <tr key={`${group.id}/${model.id}`}>
                  <td>{group.label}</td>
                  <td>{model.label}</td>
                  <td>
                    <Badge tone={toneOf(model.status)}>{t(`status.${model.status}` as 'status.active')}</Badge>
                  </td>
                  <td>{formatDate(model.checkedAt)}</td>
                  <td>
                    {model.history.length
                      ? model.history.map((p) => `${formatDate(p.observedAt)}: ${t(`status.${p.status}` as 'status.active')}`).join('; ')
                      : '—'}
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
