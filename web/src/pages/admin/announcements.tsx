import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../../client.js';
import { graphql } from '../../gql/index.js';
import { useI18n } from '../../i18n.js';
import { Badge, Button, Card, Empty, Field, Page, ProblemText, TextAreaField } from '../../ui.js';

const AdminAnnouncementsDocument = graphql(`
  query AdminAnnouncements {
    adminAnnouncements {
      id
      titleEn
      titleRu
      bodyEn
      bodyRu
      published
      publishedAt
      updatedAt
    }
  }
`);
const CreateDocument = graphql(`
  mutation CreateAnnouncement($input: CreateAnnouncementInput!) {
    createAnnouncement(input: $input) {
      id
    }
  }
`);
const PublishDocument = graphql(`
  mutation PublishAnnouncement($id: ID!) {
    publishAnnouncement(id: $id) {
      id
      published
    }
  }
`);
const UnpublishDocument = graphql(`
  mutation UnpublishAnnouncement($id: ID!) {
    unpublishAnnouncement(id: $id) {
      id
      published
    }
  }
`);

const EMPTY = { titleEn: '', titleRu: '', bodyEn: '', bodyRu: '' };

export function AdminAnnouncements() {
  const { t, formatDate } = useI18n();
  const [{ data }, refetch] = useQuery({ query: AdminAnnouncementsDocument, requestPolicy: 'network-only' });
  const [createState, create] = useMutation(CreateDocument);
  const [, publish] = useMutation(PublishDocument);
  const [, unpublish] = useMutation(UnpublishDocument);
  const [form, setForm] = useState(EMPTY);
  const problem = describeError(createState.error);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const submit = (publishNow: boolean) => async (event?: FormEvent) => {
    event?.preventDefault();
    if ((await create({ input: { ...form, publish: publishNow } })).data) {
      setForm(EMPTY);
      reload();
    }
  };
  const text = (name: keyof typeof EMPTY, label: string, multiline = false) =>
    multiline ? (
      <TextAreaField label={label} rows={4} value={form[name]} onChange={(e) => setForm({ ...form, [name]: e.target.value })} error={problem?.fields[name]} />
    ) : (
      <Field label={label} value={form[name]} onChange={(e) => setForm({ ...form, [name]: e.target.value })} error={problem?.fields[name]} />
    );
  return (
    <Page title={t('nav.adminAnnouncements')}>
      <Card title={t('admin.newAnnouncement')}>
        <form onSubmit={submit(false)} noValidate>
          <ProblemText problem={problem} />
          <div className="grid two">
            <div lang="en">
              {text('titleEn', t('admin.titleEn'))}
              {text('bodyEn', t('admin.bodyEn'), true)}
            </div>
            <div lang="ru">
              {text('titleRu', t('admin.titleRu'))}
              {text('bodyRu', t('admin.bodyRu'), true)}
            </div>
          </div>
          <div className="row">
            <Button type="submit" kind="secondary" busy={createState.fetching}>
              {t('admin.saveDraft')}
            </Button>
            <Button busy={createState.fetching} onClick={() => submit(true)()}>
              {t('admin.publish')}
            </Button>
          </div>
        </form>
      </Card>
      <Card title={t('nav.adminAnnouncements')}>
        {!data?.adminAnnouncements.length ? (
          <Empty>{t('news.none')}</Empty>
        ) : (
          <ul className="plain announcements">
            {data.adminAnnouncements.map((a) => (
              <li key={a.id} data-announcement={a.id}>
                <strong lang="en">{a.titleEn}</strong> / <strong lang="ru">{a.titleRu}</strong>{' '}
                <Badge tone={a.published ? 'good' : 'neutral'}>{a.published ? t('admin.published') : t('admin.draft')}</Badge>{' '}
                <span className="hint">{formatDate(a.publishedAt ?? a.updatedAt)}</span>{' '}
                {a.published ? (
                  <Button kind="secondary" onClick={async () => { await unpublish({ id: a.id }); reload(); }}>
                    {t('admin.unpublish')}
                  </Button>
                ) : (
                  <Button kind="secondary" onClick={async () => { await publish({ id: a.id }); reload(); }}>
                    {t('admin.publish')}
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
      </Card>
    </Page>
  );
}
