import { useQuery, useSubscription } from 'urql';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { Badge, Card, Loading, Page, toneOf } from '../ui.js';

export const StatusDocument = graphql(`
  query ServiceStatus {
    serviceStatus {
      generatedAt
      groups {
        id
        label
        status
        uptime {
          last24h
          last7d
          last30d
          allTime
        }
        models {
          id
          label
          status
          checkedAt
          history {
            observedAt
            status
          }
        }
      }
    }
  }
`);
const StatusChangedDocument = graphql(`
  subscription ServiceStatusChanged {
    serviceStatusChanged {
      groupId
      modelId
      status
      observedAt
    }
  }
`);

const HOURS = 24;

/**
 * A model's last 24 hours as 24 hourly cells: a cell is down when the model was unavailable at any point
 * of that hour (from the recorded changes), up otherwise, unknown before its first record.
 */
export function hourlyBars(history: { observedAt: string; status: string }[], now: number): ('up' | 'down' | 'none')[] {
  const sorted = [...history].sort((a, b) => a.observedAt.localeCompare(b.observedAt));
  const cells: ('up' | 'down' | 'none')[] = [];
  for (let hour = HOURS - 1; hour >= 0; hour--) {
    const start = now - (hour + 1) * 3_600_000;
    const end = now - hour * 3_600_000;
    const before = sorted.filter((p) => Date.parse(p.observedAt) <= start).at(-1);
    const inside = sorted.filter((p) => Date.parse(p.observedAt) > start && Date.parse(p.observedAt) <= end);
    const states = [...(before ? [before.status] : []), ...inside.map((p) => p.status)];
    cells.push(!states.length ? 'none' : states.includes('unavailable') ? 'down' : 'up');
  }
  return cells;
}

export function Status() {
  const { t, formatDate } = useI18n();
  const [{ data }, refetch] = useQuery({ query: StatusDocument, requestPolicy: 'network-only' });
  // Any change reloads the board (a change carries only its subject; uptime and history come with the board).
  useSubscription({ query: StatusChangedDocument }, (_previous, event) => {
    refetch({ requestPolicy: 'network-only' });
    return event;
  });
  if (!data) return <Page title={t('nav.status')}><Loading /></Page>;
  const now = Date.now();
  return (
    <Page title={t('nav.status')}>
      <p className="hint">{t('status.generated', { time: formatDate(data.serviceStatus.generatedAt) })}</p>
      {data.serviceStatus.groups.map((group) => (
        <Card key={group.id} title={group.label}>
          <p className="row">
            <Badge tone={toneOf(group.status)}>{t(`status.${group.status}` as 'status.active')}</Badge>
            <span>{t('status.uptime', { day: group.uptime.last24h, week: group.uptime.last7d, month: group.uptime.last30d })}</span>
          </p>
          <ul className="status-models">
            {group.models.map((model) => (
              <li key={model.id} data-model={model.id} data-status={model.status}>
                <span className="model-name">{model.label}</span>
                <Badge tone={toneOf(model.status)}>{t(`status.${model.status}` as 'status.active')}</Badge>
                <span className="bars" role="img" aria-label={t('status.barsLabel', { model: model.label })}>
                  {hourlyBars(model.history, now).map((cell, i) => (
                    <span key={i} className={`bar-cell ${cell}`} />
                  ))}
                </span>
                <span className="hint">{t('status.checked', { time: formatDate(model.checkedAt) })}</span>
              </li>
            ))}
          </ul>
        </Card>
      ))}
    </Page>
  );
}
