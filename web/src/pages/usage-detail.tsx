import { useQuery } from 'urql';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { Button, Loading, Money } from '../ui.js';
import type { Event } from './usage.js';

const UsageEventDocument = graphql(`
  query UsageEvent($requestId: ID!) {
    usageEvent(requestId: $requestId) {
      ...UsageEventFields
    }
  }
`);

/** A request's details: the account's read by its id; an organization's from its row (it has every field). */
export function EventDetail({ requestId, row, onClose }: { requestId: string; row?: Event; onClose(): void }) {
  const { t, formatDate } = useI18n();
  const [{ data }] = useQuery({ query: UsageEventDocument, variables: { requestId }, pause: row !== undefined });
  const event = row ?? data?.usageEvent;
  return (
    <div className="dialog-backdrop" onClick={onClose}>
      <div role="dialog" aria-modal="true" aria-labelledby="event-title" className="dialog card" onClick={(e) => e.stopPropagation()} onKeyDown={(e) => e.key === 'Escape' && onClose()}>
        <h2 id="event-title">{t('usage.event')}</h2>
        {!event ? (
          <Loading />
        ) : (
          <dl className="facts">
            <dt>{t('usage.requestId')}</dt>
            <dd>
              <code>{event.requestId}</code>
            </dd>
            <dt>{t('usage.time')}</dt>
            <dd>
              {formatDate(event.createdAt)} → {formatDate(event.completedAt)}
            </dd>
            <dt>{t('models.model')}</dt>
            <dd>{event.model}</dd>
            <dt>{t('keys.group')}</dt>
            <dd>{event.routeGroupLabel}</dd>
            <dt>{t('usage.endpoint')}</dt>
            <dd>{event.endpoint ?? '—'}</dd>
            <dt>{t('usage.status')}</dt>
            <dd>
              {event.status}
              {event.errorCode ? ` (${event.errorCode})` : ''}
            </dd>
            <dt>{t('usage.tokens')}</dt>
            <dd>
              {event.promptTokens ?? '—'} / {event.completionTokens ?? '—'} ({t('usage.cacheRead')}: {event.cacheReadTokens ?? t('usage.notReported')})
            </dd>
            <dt>{t('usage.cost')}</dt>
            <dd>
              <Money usd={event.amountUsd} /> ({t('models.official')}: <Money usd={event.officialCostUsd} />, {t('dash.savings')}: <Money usd={event.savedUsd} />)
            </dd>
            <dt>{t('usage.latency')}</dt>
            <dd>{event.latencyMs == null ? '—' : `${event.latencyMs} ms`}</dd>
            <dt>{t('usage.key')}</dt>
            <dd>{event.apiKey?.label ?? event.apiKey?.id ?? '—'}</dd>
          </dl>
        )}
        <Button autoFocus onClick={onClose}>
          {t('common.close')}
        </Button>
      </div>
    </div>
  );
}
