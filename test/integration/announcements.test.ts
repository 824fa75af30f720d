import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TRPCClientError } from '@trpc/client';
import { useTestGateway } from '../helpers/gateway.js';
import { http, trpcClient } from '../helpers/clients.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';

const gw = useTestGateway();

const ITEM_FIELDS = ['body', 'id', 'language', 'published_at', 'read', 'title'];
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

interface RawGraphQLResult {
  status: number;
  data: any;
  errors?: { message: string; extensions?: Record<string, any> }[];
}

/** GraphQL with a raw query string (the typed documents are regenerated only at integration). */
async function gql(query: string, variables: Record<string, unknown> = {}, token?: string): Promise<RawGraphQLResult> {
  const response = await fetch(`${gw.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const json = (await response.json()) as { data?: any; errors?: RawGraphQLResult['errors'] };
  return { status: response.status, data: json.data ?? null, errors: json.errors };
}

const ADMIN_FIELDS = 'id titleRu titleEn bodyRu bodyEn published publishedAt createdBy createdAt updatedAt';
const CREATE = `mutation ($input: CreateAnnouncementInput!) { createAnnouncement(input: $input) { ${ADMIN_FIELDS} } }`;
const UPDATE = `mutation ($id: ID!, $input: UpdateAnnouncementInput!) { updateAnnouncement(id: $id, input: $input) { ${ADMIN_FIELDS} } }`;
const PUBLISH = `mutation ($id: ID!) { publishAnnouncement(id: $id) { ${ADMIN_FIELDS} } }`;
const UNPUBLISH = `mutation ($id: ID!) { unpublishAnnouncement(id: $id) { ${ADMIN_FIELDS} } }`;
const ADMIN_LIST = `query { adminAnnouncements { ${ADMIN_FIELDS} } }`;
const LIST = `query ($language: String) { announcements(language: $language) { unreadCount items { id title body language publishedAt read } } }`;
const MARK_READ = `mutation ($id: ID!) { markAnnouncementRead(id: $id) { id read } }`;
const MARK_ALL = `mutation { markAllAnnouncementsRead }`;

let counter = 0;
function texts(tag = `n${++counter}-${randomUUID().slice(0, 8)}`) {
  return { titleRu: `Новость ${tag}`, titleEn: `News ${tag}`, bodyRu: `Текст ${tag}\nвторая строка`, bodyEn: `Text ${tag}\nsecond line` };
}

/** A published announcement, written through the service (transports are tested on their own below). */
async function published(admin: Awaited<ReturnType<typeof newAdmin>>, tag?: string) {
  return gw.services.announcements.create(admin.actor, { ...texts(tag), publish: true });
}

async function listRest(token: string, language?: string) {
  const response = await http(gw.url, 'GET', `/announcements${language === undefined ? '' : `?language=${encodeURIComponent(language)}`}`, { token });
  expect(response.status, response.text).toBe(200);
  return response.body as { items: any[]; unread_count: number };
}

async function trpcError(promise: Promise<unknown>): Promise<TRPCClientError<any>> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCClientError);
  return error as TRPCClientError<any>;
}

describe('admin announcements over GraphQL', () => {
  it('creates a draft, edits it, publishes and unpublishes it; users see it only while published', async () => {
    const admin = await newAdmin(gw);
    const user = await newFundedAccount(gw);
    const input = texts('draft');

    const created = await gql(CREATE, { input }, admin.token);
    expect(created.errors).toBeUndefined();
    const draft = created.data.createAnnouncement;
    expect(draft).toMatchObject({ ...input, published: false, publishedAt: null, createdBy: admin.userId });
    expect((await listRest(user.token)).items.map((i) => i.id)).not.toContain(draft.id);
    expect((await gql(ADMIN_LIST, {}, admin.token)).data.adminAnnouncements.find((a: any) => a.id === draft.id)).toMatchObject({ published: false });

    const edited = await gql(UPDATE, { id: draft.id, input: { titleEn: '  Edited title  ', bodyRu: 'Новый текст' } }, admin.token);
    expect(edited.errors).toBeUndefined();
    expect(edited.data.updateAnnouncement).toMatchObject({ titleEn: 'Edited title', bodyRu: 'Новый текст', titleRu: input.titleRu, bodyEn: input.bodyEn, published: false });

    const publishedResult = await gql(PUBLISH, { id: draft.id }, admin.token);
    expect(publishedResult.errors).toBeUndefined();
    const publishedAt = publishedResult.data.publishAnnouncement.publishedAt;
    expect(publishedResult.data.publishAnnouncement.published).toBe(true);
    expect(new Date(publishedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Publishing again keeps the original date.
    expect((await gql(PUBLISH, { id: draft.id }, admin.token)).data.publishAnnouncement.publishedAt).toBe(publishedAt);

    const en = (await listRest(user.token, 'en')).items.find((i) => i.id === draft.id);
    expect(en).toEqual({ id: draft.id, title: 'Edited title', body: input.bodyEn, language: 'en', published_at: publishedAt, read: false });
    const ru = (await listRest(user.token, 'ru')).items.find((i) => i.id === draft.id);
    expect(ru).toEqual({ id: draft.id, title: input.titleRu, body: 'Новый текст', language: 'ru', published_at: publishedAt, read: false });

    // An edit of a published announcement shows at once.
    await gql(UPDATE, { id: draft.id, input: { titleRu: 'Исправлено' } }, admin.token);
    expect((await listRest(user.token)).items.find((i) => i.id === draft.id).title).toBe('Исправлено');

    const hidden = await gql(UNPUBLISH, { id: draft.id }, admin.token);
    expect(hidden.data.unpublishAnnouncement).toMatchObject({ published: false, publishedAt: null });
    expect((await listRest(user.token)).items.map((i) => i.id)).not.toContain(draft.id);
    expect((await http(gw.url, 'POST', `/announcements/${draft.id}/read`, { token: user.token })).status).toBe(404);
  });

  it('creates and publishes at once with publish: true', async () => {
    const admin = await newAdmin(gw);
    const user = await newFundedAccount(gw);
    const created = await gql(CREATE, { input: { ...texts(), publish: true } }, admin.token);
    expect(created.data.createAnnouncement.published).toBe(true);
    const list = await listRest(user.token);
    expect(list.items[0].id).toBe(created.data.createAnnouncement.id);
  });

  it('refuses non-admins with FORBIDDEN and writes nothing', async () => {
    const admin = await newAdmin(gw);
    const user = await newFundedAccount(gw);
    const existing = await gw.services.announcements.create(admin.actor, texts());
    const before = await gw.db.query('select * from announcements order by id');
    for (const [query, variables] of [
      [CREATE, { input: texts() }],
      [UPDATE, { id: existing.id, input: { titleEn: 'hijacked' } }],
      [PUBLISH, { id: existing.id }],
      [UNPUBLISH, { id: existing.id }],
      [ADMIN_LIST, {}],
    ] as const) {
      const result = await gql(query, variables, user.token);
      expect(result.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'admin_required' });
    }
    expect((await gql(CREATE, { input: texts() })).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
    expect(await gw.db.query('select * from announcements order by id')).toEqual(before);
  });

  it.each([
    ['a missing English title', { titleRu: 'Т', bodyRu: 'Т', bodyEn: 'B' }, ['titleEn'], 'missing'],
    ['an empty body', { ...texts(), bodyEn: '   ' }, ['bodyEn'], 'string_too_short'],
    ['a title over 200 characters', { ...texts(), titleRu: 'я'.repeat(201) }, ['titleRu'], 'string_too_long'],
    ['a body over 10000 characters', { ...texts(), bodyRu: 'x'.repeat(10_001) }, ['bodyRu'], 'string_too_long'],
    ['a title with a line break', { ...texts(), titleEn: 'two\nlines' }, ['titleEn'], 'value_error'],
    ['a body with a NUL character', { ...texts(), bodyEn: 'nul \u0000 here' }, ['bodyEn'], 'value_error'],
  ])('create refuses %s (service, as the tRPC and GraphQL transports call it)', async (_name, input, loc, type) => {
    const admin = await newAdmin(gw);
    const error = await gw.services.announcements.create(admin.actor, input as any).catch((e: unknown) => e as any);
    expect(error.code).toBe('validation_failed');
    expect(error.issues).toContainEqual(expect.objectContaining({ loc, type }));
  });

  it('validation errors, unknown ids and cleared texts over GraphQL', async () => {
    const admin = await newAdmin(gw);
    const invalid = await gql(CREATE, { input: { ...texts(), titleEn: 'x'.repeat(201) } }, admin.token);
    expect(invalid.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['titleEn'], type: 'string_too_long' }] });
    // A required field left out is refused by GraphQL itself.
    const { titleRu: _omitted, ...partial } = texts();
    expect((await gql(CREATE, { input: partial }, admin.token)).errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');

    const draft = await gw.services.announcements.create(admin.actor, texts());
    const cleared = await gql(UPDATE, { id: draft.id, input: { bodyEn: null } }, admin.token);
    expect(cleared.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['bodyEn'] }] });
    const emptied = await gql(UPDATE, { id: draft.id, input: { titleRu: '' } }, admin.token);
    expect(emptied.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['titleRu'], type: 'string_too_short' }] });
    for (const query of [PUBLISH, UNPUBLISH]) {
      expect((await gql(query, { id: UNKNOWN_ID }, admin.token)).errors![0]!.extensions!.code).toBe('NOT_FOUND');
      expect((await gql(query, { id: 'nope' }, admin.token)).errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['announcementId'] }] });
    }
    expect((await gql(UPDATE, { id: UNKNOWN_ID, input: { titleEn: 'x' } }, admin.token)).errors![0]!.extensions!.code).toBe('NOT_FOUND');
    const unchanged = await gql(UPDATE, { id: draft.id, input: {} }, admin.token);
    expect(unchanged.data.updateAnnouncement).toMatchObject({ titleRu: draft.titleRu, updatedAt: draft.updatedAt.toISOString() });
  });
});

describe('REST /announcements (SPEC.md 4.5)', () => {
  it('lists published announcements newest first, in ru by default and in en, with unread_count', async () => {
    const admin = await newAdmin(gw);
    const older = await published(admin, 'older');
    const newer = await published(admin, 'newer');
    const draft = await gw.services.announcements.create(admin.actor, texts('hidden-draft'));
    const user = await newFundedAccount(gw);

    const response = await http(gw.url, 'GET', '/announcements', { token: user.token });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['items', 'unread_count']);
    const ru = response.body as { items: any[]; unread_count: number };
    for (const item of ru.items) expect(Object.keys(item).sort()).toEqual(ITEM_FIELDS);
    const ids = ru.items.map((i) => i.id);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    expect(ids).not.toContain(draft.id);
    expect(response.text).not.toContain('hidden-draft');
    const times = ru.items.map((i) => Date.parse(i.published_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(ru.items.find((i) => i.id === newer.id)).toEqual({
      id: newer.id, title: 'Новость newer', body: 'Текст newer\nвторая строка', language: 'ru', published_at: newer.publishedAt!.toISOString(), read: false,
    });
    expect(ru.unread_count).toBe(ru.items.length);
    expect(ru.items.every((i) => i.read === false && i.language === 'ru')).toBe(true);
    expect(await listRest(user.token, 'ru')).toEqual(ru);

    const en = await listRest(user.token, 'en');
    expect(en.items.map((i) => i.id)).toEqual(ids);
    expect(en.items.find((i) => i.id === older.id)).toMatchObject({ title: 'News older', body: 'Text older\nsecond line', language: 'en' });
    expect(en.unread_count).toBe(ru.unread_count);
  });

  it.each(['de', 'RU', '', 'en-US'])('422 with loc [query, language] for language=%j', async (language) => {
    const { token } = await newFundedAccount(gw);
    const response = await http(gw.url, 'GET', `/announcements?language=${language}`, { token });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'language'] })]);
  });

  it('422 for a repeated language parameter', async () => {
    const { token } = await newFundedAccount(gw);
    const response = await http(gw.url, 'GET', '/announcements?language=ru&language=en', { token });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'language']);
  });

  it('read state is per user and independent of language; marking is idempotent', async () => {
    const admin = await newAdmin(gw);
    const first = await published(admin);
    const second = await published(admin);
    const a = await newFundedAccount(gw);
    const b = await newFundedAccount(gw);
    const unreadBefore = (await listRest(a.token)).unread_count;
    expect(unreadBefore).toBeGreaterThanOrEqual(2);

    const marked = await http(gw.url, 'POST', `/announcements/${first.id}/read`, { token: a.token });
    expect(marked.status).toBe(200);
    expect(marked.body).toEqual({ ok: true, id: first.id, read: true });
    const again = await http(gw.url, 'POST', `/announcements/${first.id}/read`, { token: a.token });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ok: true, id: first.id, read: true });
    expect((await gw.db.query('select 1 from announcement_reads where announcement_id = $1', [first.id])).length).toBe(1);

    for (const language of ['ru', 'en']) {
      const listA = await listRest(a.token, language);
      expect(listA.items.find((i) => i.id === first.id).read).toBe(true);
      expect(listA.items.find((i) => i.id === second.id).read).toBe(false);
      expect(listA.unread_count).toBe(unreadBefore - 1);
      const listB = await listRest(b.token, language);
      expect(listB.items.find((i) => i.id === first.id).read).toBe(false);
      expect(listB.unread_count).toBe(unreadBefore);
    }

    // Unpublishing and republishing keeps what a user has read.
    await gw.services.announcements.unpublish(admin.actor, first.id);
    const withoutFirst = await listRest(a.token);
    expect(withoutFirst.items.map((i) => i.id)).not.toContain(first.id);
    expect(withoutFirst.unread_count).toBe(unreadBefore - 1);
    await gw.services.announcements.unpublish(admin.actor, second.id);
    expect((await listRest(a.token)).unread_count).toBe(unreadBefore - 2);
    await gw.services.announcements.publish(admin.actor, second.id);
    await gw.services.announcements.publish(admin.actor, first.id);
    const republished = await listRest(a.token);
    expect(republished.items.slice(0, 2)).toMatchObject([{ id: first.id, read: true }, { id: second.id, read: false }]);
    expect(republished.unread_count).toBe(unreadBefore - 1);
  });

  it('read-all marks every published announcement, counts only the newly marked, and skips drafts', async () => {
    const admin = await newAdmin(gw);
    const one = await published(admin);
    await published(admin);
    const draft = await gw.services.announcements.create(admin.actor, texts());
    const user = await newFundedAccount(gw);
    const total = (await listRest(user.token)).unread_count;

    await http(gw.url, 'POST', `/announcements/${one.id}/read`, { token: user.token });
    const all = await http(gw.url, 'POST', '/announcements/read-all', { token: user.token });
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ ok: true, marked: total - 1 });
    const after = await listRest(user.token, 'en');
    expect(after.unread_count).toBe(0);
    expect(after.items.every((i) => i.read)).toBe(true);
    expect((await http(gw.url, 'POST', '/announcements/read-all', { token: user.token })).body).toEqual({ ok: true, marked: 0 });

    // A later announcement is unread again; a draft published later too.
    await gw.services.announcements.publish(admin.actor, draft.id);
    const fresh = await published(admin);
    const later = await listRest(user.token);
    expect(later.unread_count).toBe(2);
    expect(later.items.filter((i) => !i.read).map((i) => i.id)).toEqual([fresh.id, draft.id]);
    expect((await http(gw.url, 'POST', '/announcements/read-all', { token: user.token })).body).toEqual({ ok: true, marked: 2 });
  });

  it('404 for an unknown or unpublished id, 422 for a non-uuid, 401 without a session', async () => {
    const admin = await newAdmin(gw);
    const user = await newFundedAccount(gw);
    const draft = await gw.services.announcements.create(admin.actor, texts());

    const unknown = await http(gw.url, 'POST', `/announcements/${UNKNOWN_ID}/read`, { token: user.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'No such announcement', code: 'not_found' });
    expect((await http(gw.url, 'POST', `/announcements/${draft.id}/read`, { token: user.token })).status).toBe(404);
    expect((await gw.db.query('select 1 from announcement_reads where announcement_id = $1', [draft.id])).length).toBe(0);

    const malformed = await http(gw.url, 'POST', '/announcements/not-a-uuid/read', { token: user.token });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail).toEqual([expect.objectContaining({ loc: ['path', 'announcement_id'], type: 'uuid_format' })]);

    expect((await http(gw.url, 'GET', '/announcements')).status).toBe(401);
    expect((await http(gw.url, 'GET', '/announcements?language=en')).status).toBe(401);
    expect((await http(gw.url, 'POST', `/announcements/${draft.id}/read`)).status).toBe(401);
    expect((await http(gw.url, 'POST', '/announcements/read-all')).status).toBe(401);
  });
});

describe('announcements over GraphQL and tRPC', () => {
  it('GraphQL announcements, markAnnouncementRead, markAllAnnouncementsRead', async () => {
    const admin = await newAdmin(gw);
    const first = await published(admin, 'gql-first');
    const second = await published(admin, 'gql-second');
    const a = await newFundedAccount(gw);
    const b = await newFundedAccount(gw);

    const ru = await gql(LIST, {}, a.token);
    expect(ru.errors).toBeUndefined();
    const total = ru.data.announcements.unreadCount;
    expect(ru.data.announcements.items.slice(0, 2)).toEqual([
      { id: second.id, title: 'Новость gql-second', body: 'Текст gql-second\nвторая строка', language: 'ru', publishedAt: second.publishedAt!.toISOString(), read: false },
      { id: first.id, title: 'Новость gql-first', body: 'Текст gql-first\nвторая строка', language: 'ru', publishedAt: first.publishedAt!.toISOString(), read: false },
    ]);
    const en = await gql(LIST, { language: 'en' }, a.token);
    expect(en.data.announcements.items[0]).toMatchObject({ id: second.id, title: 'News gql-second', language: 'en' });
    expect((await gql(LIST, { language: null }, a.token)).data.announcements.items[0].language).toBe('ru');

    expect((await gql(MARK_READ, { id: first.id }, a.token)).data.markAnnouncementRead).toEqual({ id: first.id, read: true });
    expect((await gql(MARK_READ, { id: first.id }, a.token)).data.markAnnouncementRead).toEqual({ id: first.id, read: true });
    const afterA = (await gql(LIST, { language: 'en' }, a.token)).data.announcements;
    expect(afterA.unreadCount).toBe(total - 1);
    expect(afterA.items.find((i: any) => i.id === first.id).read).toBe(true);
    expect((await gql(LIST, {}, b.token)).data.announcements.unreadCount).toBe(total);

    expect((await gql(MARK_ALL, {}, a.token)).data.markAllAnnouncementsRead).toBe(total - 1);
    expect((await gql(MARK_ALL, {}, a.token)).data.markAllAnnouncementsRead).toBe(0);
    expect((await gql(LIST, {}, a.token)).data.announcements.unreadCount).toBe(0);

    const bad = await gql(LIST, { language: 'fr' }, a.token);
    expect(bad.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['language'] }] });
    expect((await gql(MARK_READ, { id: UNKNOWN_ID }, a.token)).errors![0]!.extensions!.code).toBe('NOT_FOUND');
    expect((await gql(MARK_READ, { id: 'x' }, a.token)).errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['announcementId'], type: 'uuid_format' }] });
    expect((await gql(LIST, {})).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
    expect((await gql(MARK_ALL, {})).errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
  });

  it('tRPC announcements.list, markRead, markAllRead', async () => {
    const admin = await newAdmin(gw);
    const first = await published(admin, 'trpc-first');
    const a = trpcClient(gw.url, (await newFundedAccount(gw)).token);
    const b = trpcClient(gw.url, (await newFundedAccount(gw)).token);

    const list = await a.announcements.list.query({ language: 'en' });
    expect(list.items[0]).toMatchObject({ id: first.id, title: 'News trpc-first', body: 'Text trpc-first\nsecond line', language: 'en', read: false });
    expect((await a.announcements.list.query()).items[0]).toMatchObject({ title: 'Новость trpc-first', language: 'ru' });
    const total = list.unreadCount;

    expect(await a.announcements.markRead.mutate({ id: first.id })).toEqual({ id: first.id, read: true });
    expect(await a.announcements.markRead.mutate({ id: first.id })).toEqual({ id: first.id, read: true });
    expect((await a.announcements.list.query()).unreadCount).toBe(total - 1);
    expect((await b.announcements.list.query()).unreadCount).toBe(total);
    expect(await b.announcements.markAllRead.mutate()).toEqual({ marked: total });
    expect(await b.announcements.markAllRead.mutate()).toEqual({ marked: 0 });

    expect((await trpcError(a.announcements.markRead.mutate({ id: UNKNOWN_ID }))).data.code).toBe('NOT_FOUND');
    const invalid = await trpcError(a.announcements.list.query({ language: 'de' as 'en' }));
    expect(invalid.data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', issues: [{ loc: ['language'] }] });
    expect((await trpcError(trpcClient(gw.url).announcements.list.query())).data.code).toBe('UNAUTHORIZED');
  });

  it('tRPC admin procedures: create, update, publish, unpublish, list; FORBIDDEN for others', async () => {
    const admin = trpcClient(gw.url, (await newAdmin(gw)).token);
    const userAccount = await newFundedAccount(gw);
    const user = trpcClient(gw.url, userAccount.token);
    const input = texts('trpc-admin');

    const created = await admin.announcements.adminCreate.mutate(input);
    expect(created).toMatchObject({ ...input, published: false, publishedAt: null });
    const edited = await admin.announcements.adminUpdate.mutate({ id: created.id, bodyEn: 'Edited over tRPC' });
    expect(edited).toMatchObject({ bodyEn: 'Edited over tRPC', titleEn: input.titleEn });
    expect((await admin.announcements.adminList.query()).map((x) => x.id)).toContain(created.id);
    expect((await user.announcements.list.query()).items.map((i) => i.id)).not.toContain(created.id);

    expect(await admin.announcements.adminPublish.mutate({ id: created.id })).toMatchObject({ published: true });
    expect((await user.announcements.list.query({ language: 'en' })).items[0]).toMatchObject({ id: created.id, body: 'Edited over tRPC' });
    expect(await admin.announcements.adminUnpublish.mutate({ id: created.id })).toMatchObject({ published: false, publishedAt: null });
    expect((await user.announcements.list.query()).items.map((i) => i.id)).not.toContain(created.id);

    for (const call of [
      () => user.announcements.adminCreate.mutate(texts()),
      () => user.announcements.adminUpdate.mutate({ id: created.id, titleRu: 'x' }),
      () => user.announcements.adminPublish.mutate({ id: created.id }),
      () => user.announcements.adminUnpublish.mutate({ id: created.id }),
      () => user.announcements.adminList.query(),
    ]) {
      expect((await trpcError(call())).data).toMatchObject({ code: 'FORBIDDEN', reason: 'admin_required' });
    }
    const invalid = await trpcError(admin.announcements.adminCreate.mutate({ ...texts(), bodyRu: '' }));
    expect(invalid.data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', issues: [{ loc: ['bodyRu'], type: 'string_too_short' }] });
    expect((await trpcError(admin.announcements.adminPublish.mutate({ id: UNKNOWN_ID }))).data.code).toBe('NOT_FOUND');
  });
});
