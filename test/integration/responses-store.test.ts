import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ResponsesStore, type ResponsesItem, type StoreResponseInput } from '../../src/inference/responses-store.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startGateway } from '../../src/server.js';
import { createLogger } from '../../src/shared/logging.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';

const gw = useTestGateway({ RESPONSES_TTL_DAYS: '30' });
const DAY_MS = 86_400_000;

/** A clock the tests move by hand, so expiry is tested without waiting or writing rows by hand. */
const clock = { at: Date.parse('2026-11-24T10:00:00Z'), now() { return new Date(this.at); } };
let store: ResponsesStore;
let alice: string;
let aliceToken: string;
let bob: string;

beforeAll(async () => {
  store = new ResponsesStore({ orm: gw.database.orm, settings: gw.config.responses, clock, log: createLogger('silent') });
  const a = await newFundedAccount(gw);
  alice = a.userId;
  aliceToken = a.token;
  bob = (await newFundedAccount(gw)).userId;
});

function respId(): string {
  return `resp_${randomBytes(16).toString('hex')}`;
}

function userMsg(text: string): ResponsesItem {
  return { role: 'user', content: text };
}

function assistantMsg(text: string): ResponsesItem {
  return { type: 'message', id: `msg_${randomBytes(8).toString('hex')}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
}

function responseOf(id: string, output: ResponsesItem[], extra: Record<string, unknown> = {}): StoreResponseInput['response'] {
  return { id, object: 'response', status: 'completed', model: 'gpt-test', output, usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 }, ...extra };
}

async function save(userId: string, input: ResponsesItem[], output: ResponsesItem[], previousResponseId: string | null = null, id = respId()) {
  await store.save({ id, userId, apiKeyId: null, model: 'gpt-test', previousResponseId, input, output, response: responseOf(id, output) });
  return { id, output };
}

describe('ResponsesStore', () => {
  it('get returns the response object exactly as saved, and null for an unknown id', async () => {
    const out = [assistantMsg('hello')];
    const { id } = await save(alice, [userMsg('hi')], out);
    expect(await store.get(alice, id)).toEqual(responseOf(id, out));
    expect(await store.get(alice, respId())).toBeNull();
  });

  it('context of a 3-response chain is each response’s input then output, oldest first (instructions not carried)', async () => {
    const a = await save(alice, [userMsg('one')], [assistantMsg('A-out')]);
    const fc = { type: 'function_call', id: 'fc_b1', call_id: 'call_1', name: 'lookup', arguments: '{}' };
    const b = await save(alice, [userMsg('two')], [fc], a.id);
    const c = await save(alice, [{ type: 'function_call_output', call_id: 'call_1', output: '42' }], [assistantMsg('C-out')], b.id);

    const context = await store.context(alice, c.id);
    expect(context).not.toBeNull();
    expect(context!.map((item) => item.content ?? item.output ?? item.name)).toEqual([
      'one', a.output[0]!.content, 'two', 'lookup', '42', c.output[0]!.content,
    ]);
    // Input items got ids and the short message form its type; output items kept theirs.
    expect(context![0]).toMatchObject({ type: 'message', role: 'user', content: 'one', id: expect.stringMatching(/^msg_[0-9a-f]{48}$/) });
    expect(context![4]).toMatchObject({ type: 'function_call_output', id: expect.stringMatching(/^fco_[0-9a-f]{48}$/) });
    expect(context![1]).toEqual(a.output[0]);
    expect(context![3]).toEqual(fc);
    // The middle of the chain sees only its own past.
    expect((await store.context(alice, b.id))!.length).toBe(4);
    expect(await store.context(alice, respId())).toBeNull();
  });

  it('context of a response with no items is an empty list, not null', async () => {
    const { id } = await save(alice, [], []);
    expect(await store.context(alice, id)).toEqual([]);
  });

  it('text with a NUL character is stored and read back unchanged (json, not jsonb, which refuses \\u0000)', async () => {
    const nul = 'before\u0000after';
    const out = [assistantMsg(nul)];
    const { id } = await save(alice, [{ type: 'message', id: 'msg_nul', role: 'user', content: nul }], out);
    expect(await store.get(alice, id)).toEqual(responseOf(id, out));
    expect((await store.context(alice, id))!.map((i) => i.content)).toEqual([nul, out[0]!.content]);
    expect((await store.items(alice, ['msg_nul'])).get('msg_nul')!.content).toBe(nul);
  });

  it('ids PostgreSQL text cannot hold (NUL, lone surrogate) are never found, never an error', async () => {
    const odd = ['msg_a\u0000b', 'msg_\ud800', ''];
    const { id } = await save(alice, odd.map((oddId) => ({ type: 'message', id: oddId, role: 'user', content: 'x' })), []);
    expect(await store.context(alice, id)).toHaveLength(3);
    expect((await store.items(alice, odd)).size).toBe(0);
    for (const bad of ['resp_\u0000', 'resp_\udc00']) {
      expect(await store.get(alice, bad)).toBeNull();
      expect(await store.context(alice, bad)).toBeNull();
      expect(await store.inputItems(alice, bad, {})).toBeNull();
      expect(await store.delete(alice, bad)).toBe(false);
    }
    await expect(store.inputItems(alice, id, { after: 'msg_a\u0000b' })).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('the caller’s input objects are not changed by save', async () => {
    const input = [userMsg('do not touch')];
    await save(alice, input, []);
    expect(input[0]).toEqual({ role: 'user', content: 'do not touch' });
  });

  it('items resolves item_reference ids for the account, the newest copy wins, missing ids are absent', async () => {
    const first = await save(alice, [{ type: 'message', id: 'msg_dup', role: 'user', content: 'old' }], [assistantMsg('x')]);
    await save(alice, [{ type: 'message', id: 'msg_dup', role: 'user', content: 'new' }], []);
    await save(bob, [{ type: 'message', id: 'msg_dup', role: 'user', content: 'bob' }], []);
    const found = await store.items(alice, ['msg_dup', first.output[0]!.id!, 'msg_missing', 'msg_dup']);
    expect([...found.keys()].sort()).toEqual([first.output[0]!.id!, 'msg_dup'].sort());
    expect(found.get('msg_dup')!.content).toBe('new');
    expect(found.get(first.output[0]!.id!)).toEqual(first.output[0]);
    expect((await store.items(bob, ['msg_dup'])).get('msg_dup')!.content).toBe('bob');
    expect((await store.items(alice, [])).size).toBe(0);
  });

  it('another account sees nothing: get, context, items, input_items and delete all answer as for an unknown id', async () => {
    const secret = `SECRET-${randomBytes(4).toString('hex')}`;
    const own = await save(alice, [{ type: 'message', id: 'msg_private', role: 'user', content: secret }], [assistantMsg(secret)]);
    expect(await store.get(bob, own.id)).toBeNull();
    expect(await store.context(bob, own.id)).toBeNull();
    expect((await store.items(bob, ['msg_private', own.output[0]!.id!])).size).toBe(0);
    expect(await store.inputItems(bob, own.id, {})).toBeNull();
    expect(await store.delete(bob, own.id)).toBe(false);
    // Bob continuing Alice's response from his own: the chain stops at the link that is not his.
    const bobs = await save(bob, [userMsg('mine')], [], own.id);
    expect(JSON.stringify(await store.context(bob, bobs.id))).not.toContain(secret);
    expect(await store.get(alice, own.id)).not.toBeNull();
  });

  it('expired responses are invisible at once and purged (items with them); live ones stay', async () => {
    const start = clock.at;
    try {
      const old = await save(alice, [{ type: 'message', id: 'msg_expiring', role: 'user', content: 'old' }], [assistantMsg('old')]);
      clock.at = start + 20 * DAY_MS;
      const young = await save(alice, [userMsg('young')], [assistantMsg('young')], old.id);
      clock.at = start + 30 * DAY_MS + 1;
      expect(await store.get(alice, old.id)).toBeNull();
      expect(await store.context(alice, old.id)).toBeNull();
      expect((await store.items(alice, ['msg_expiring'])).size).toBe(0);
      expect(await store.inputItems(alice, old.id, {})).toBeNull();
      expect(await store.delete(alice, old.id)).toBe(false);
      // The younger response is still there; its conversation starts where the expired one was.
      expect((await store.context(alice, young.id))!.map((i) => i.content)).toEqual(['young', young.output[0]!.content]);

      const purged = await store.purgeExpired();
      expect(purged).toBeGreaterThanOrEqual(1);
      expect(await gw.db.query('select 1 from responses where id = $1', [old.id])).toHaveLength(0);
      expect(await gw.db.query('select 1 from response_items where response_id = $1', [old.id])).toHaveLength(0);
      expect(await gw.db.query('select 1 from responses where id = $1', [young.id])).toHaveLength(1);
      expect(await store.purgeExpired()).toBe(0);
    } finally {
      clock.at = start;
    }
  });

  it('purge works in batches: more rows than one batch are all deleted', async () => {
    const start = clock.at;
    try {
      clock.at = start - 40 * DAY_MS;
      const ids = Array.from({ length: 1_203 }, () => respId());
      // Written in bulk (1,203 saves one by one would only test the loop more slowly).
      await gw.db.query(
        `insert into responses (id, user_id, model, created_at, expires_at, response)
         select x, $2, 'gpt-test', $3, $3, '{}'::json from unnest($1::text[]) as x`,
        [ids, alice, new Date(clock.at).toISOString()],
      );
      clock.at = start;
      expect(await store.purgeExpired()).toBe(1_203);
      expect(await gw.db.query('select 1 from responses where id = any($1)', [ids])).toHaveLength(0);
    } finally {
      clock.at = start;
    }
  });

  it('delete removes the response and its items (cascade); a second delete is false', async () => {
    const { id, output } = await save(alice, [userMsg('bye')], [assistantMsg('bye')]);
    expect(await store.delete(alice, id)).toBe(true);
    expect(await store.get(alice, id)).toBeNull();
    expect(await gw.db.query('select 1 from response_items where response_id = $1', [id])).toHaveLength(0);
    expect((await store.items(alice, [output[0]!.id!])).size).toBe(0);
    expect(await store.delete(alice, id)).toBe(false);
  });

  it('deleting the account deletes its stored responses and their items (cascade)', async () => {
    const carol = (await newFundedAccount(gw)).userId;
    const { id } = await save(carol, [userMsg('c')], [assistantMsg('c')]);
    await gw.db.query('delete from users where id = $1', [carol]);
    expect(await gw.db.query('select 1 from responses where id = $1', [id])).toHaveLength(0);
    expect(await gw.db.query('select 1 from response_items where response_id = $1', [id])).toHaveLength(0);
  });

  it('input_items pages in OpenAI’s list shape: order, limit, after, has_more', async () => {
    const input = Array.from({ length: 5 }, (_, n) => ({ type: 'message', id: `msg_in${n}`, role: 'user', content: `m${n}` }));
    const { id } = await save(alice, input, [assistantMsg('out')]);

    const all = (await store.inputItems(alice, id, {}))!;
    expect(all).toEqual({ object: 'list', data: [...input].reverse(), first_id: 'msg_in4', last_id: 'msg_in0', has_more: false });

    const asc1 = (await store.inputItems(alice, id, { order: 'asc', limit: 2 }))!;
    expect(asc1).toMatchObject({ first_id: 'msg_in0', last_id: 'msg_in1', has_more: true });
    const asc2 = (await store.inputItems(alice, id, { order: 'asc', limit: 2, after: 'msg_in1' }))!;
    expect(asc2).toMatchObject({ first_id: 'msg_in2', last_id: 'msg_in3', has_more: true });
    const asc3 = (await store.inputItems(alice, id, { order: 'asc', limit: 2, after: 'msg_in3' }))!;
    expect(asc3).toMatchObject({ data: [input[4]], first_id: 'msg_in4', last_id: 'msg_in4', has_more: false });

    const desc = (await store.inputItems(alice, id, { limit: 3, after: 'msg_in3' }))!;
    expect(desc.data.map((i) => i.id)).toEqual(['msg_in2', 'msg_in1', 'msg_in0']);
    expect(desc.has_more).toBe(false);

    // Output items are not input items; an unknown cursor is a validation error, not an empty page.
    await expect(store.inputItems(alice, id, { after: 'msg_nope' })).rejects.toMatchObject({ code: 'validation_failed', issues: [{ loc: ['after'] }] });
    await expect(store.inputItems(alice, id, { limit: 101 })).rejects.toMatchObject({ code: 'validation_failed' });

    const empty = (await store.inputItems(alice, (await save(alice, [], [])).id, {}))!;
    expect(empty).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('save is idempotent on id: a repeated save keeps the first and writes no duplicate items', async () => {
    const id = respId();
    const input = [userMsg('once')];
    const output = [assistantMsg('once')];
    await store.save({ id, userId: alice, apiKeyId: null, model: 'gpt-test', previousResponseId: null, input, output, response: responseOf(id, output) });
    await store.save({ id, userId: alice, apiKeyId: null, model: 'gpt-test', previousResponseId: null, input, output, response: responseOf(id, output, { status: 'changed' }) });
    await Promise.all(Array.from({ length: 5 }, () => store.save({ id, userId: alice, apiKeyId: null, model: 'gpt-test', previousResponseId: null, input, output, response: responseOf(id, output) })));
    expect((await store.get(alice, id))!.status).toBe('completed');
    expect(await store.context(alice, id)).toHaveLength(2);
    const [count] = await gw.db.query<{ n: number }>('select count(*)::int as n from response_items where response_id = $1', [id]);
    expect(count!.n).toBe(2);
  });

  it('50 parallel saves of different responses for one account all land, each complete', async () => {
    const saved = await Promise.all(Array.from({ length: 50 }, (_, n) => save(alice, [userMsg(`p${n}`), userMsg(`q${n}`)], [assistantMsg(`r${n}`)])));
    const contexts = await Promise.all(saved.map((s) => store.context(alice, s.id)));
    contexts.forEach((context, n) => expect(context!.map((i) => i.content)).toEqual([`p${n}`, `q${n}`, saved[n]!.output[0]!.content]));
    const [count] = await gw.db.query<{ n: number }>('select count(*)::int as n from responses where id = any($1)', [saved.map((s) => s.id)]);
    expect(count!.n).toBe(50);
  });

  it('stores the api key id, the previous response id and an expiry RESPONSES_TTL_DAYS after creation', async () => {
    const key = await http(gw.url, 'POST', '/keys', { token: aliceToken, body: { provider_family: 'family_d' } });
    expect(key.status).toBe(201);
    const keyId = String(key.body.id);
    const prev = await save(alice, [userMsg('p')], []);
    const id = respId();
    await store.save({ id, userId: alice, apiKeyId: keyId, model: 'gpt-test', previousResponseId: prev.id, input: [userMsg('n')], output: [], response: responseOf(id, []) });
    const [row] = await gw.db.query<{ api_key_id: string; previous_response_id: string; model: string; ttl: number }>(
      `select api_key_id, previous_response_id, model, extract(epoch from expires_at - created_at)::int as ttl from responses where id = $1`,
      [id],
    );
    expect(row).toEqual({ api_key_id: keyId, previous_response_id: prev.id, model: 'gpt-test', ttl: 30 * 86_400 });
  });

  it('a gateway purges expired responses at start (another process over the same database)', async () => {
    const id = respId();
    await gw.db.query(
      `insert into responses (id, user_id, model, created_at, expires_at, response) values ($1, $2, 'gpt-test', now() - interval '31 days', now() - interval '1 day', '{}'::json)`,
      [id, alice],
    );
    const second = await startGateway(loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATABASE_URL: gw.db.url, LOG_LEVEL: 'silent' }), createLogger('silent'));
    try {
      for (let waited = 0; (await gw.db.query('select 1 from responses where id = $1', [id])).length && waited < 5_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await gw.db.query('select 1 from responses where id = $1', [id])).toHaveLength(0);
    } finally {
      await second.stop();
    }
  });

  it('RESPONSES_TTL_DAYS defaults to 30 and is validated like the other settings', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).responses.ttlMs).toBe(30 * DAY_MS);
    expect(loadConfig({ NODE_ENV: 'test', RESPONSES_TTL_DAYS: '0.5' }).responses.ttlMs).toBe(DAY_MS / 2);
    for (const bad of ['0', '-1', 'thirty', '99999']) {
      expect(() => loadConfig({ NODE_ENV: 'test', RESPONSES_TTL_DAYS: bad }), bad).toThrow(ConfigError);
    }
    expect(() => loadConfig({ NODE_ENV: 'test', RESPONSES_TTL_DAYS: 'x' })).toThrow(/RESPONSES_TTL_DAYS/);
  });
});
