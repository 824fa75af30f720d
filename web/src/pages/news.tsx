import { useMutation, useQuery } from 'urql';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { Badge, Button, Card, Empty, Loading, Page } from '../ui.js';

const AnnouncementsDocument = graphql(`
  query Announcements($language: String) {
    announcements(language: $language) {
      unreadCount
      items {
        id
        title
        body
        publishedAt
        read
      }
    }
  }
`);
const MarkReadDocument = graphql(`
  mutation MarkAnnouncementRead($id: ID!) {
    markAnnouncementRead(id: $id) {
      id
      read
    }
  }
`);
const MarkAllReadDocument = graphql(`
  mutation MarkAllAnnouncementsRead {
    markAllAnnouncementsRead
  }
`);

export function News() {
  const { t, language, formatDate } = useI18n();
  const [{ data }, refetch] = useQuery({ query: AnnouncementsDocument, variables: { language }, requestPolicy: 'network-only' });
  const [, markRead] = useMutation(MarkReadDocument);
  const [, markAll] = useMutation(MarkAllReadDocument);
  const list = data?.announcements;
  return (
    <Page
      title={t('nav.news')}
      actions={
        list && list.unreadCount > 0 ? (
          <Button kind="secondary" onClick={async () => { await markAll({}); refetch({ requestPolicy: 'network-only' }); }}>
            {t('news.markAll', { count: list.unreadCount })}
          </Button>
        ) : null
      }
    >
      {!list ? (
        <Loading />
      ) : !list.items.length ? (
        <Empty>{t('news.none')}</Empty>
      ) : (
        list.items.map((item) => (
          <Card key={item.id} className={item.read ? '' : 'unread'}>
            <article data-announcement={item.id}>
              <h2>
                {item.title} {!item.read && <Badge tone="warn">{t('news.new')}</Badge>}
              </h2>
              <p className="hint">{formatDate(item.publishedAt)}</p>
              <p className="prose">{item.body}</p>
              {!item.read && (
                <Button kind="secondary" onClick={async () => { await markRead({ id: item.id }); refetch({ requestPolicy: 'network-only' }); }}>
                  {t('news.markRead')}
                </Button>
              )}
            </article>
          </Card>
        ))
      )}
    </Page>
  );
}
