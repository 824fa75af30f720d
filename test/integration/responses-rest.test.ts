import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responsesRoutes } from '../../rest-shim/v1/responses.router.js';
import type { ResponsesItem } from '../../src/inference/responses-store.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * The REST surface of stored responses, on the router alone (mounted here on /v1 of a small express app
 * over the test gateway's services), called with plain HTTP and with the official openai client.
 */
const gw = useTestGateway();
let server: Server;
let base: string;
let aliceKey: string;
let aliceId: string;
let bobKey: string;

async function keyOf(token: string): Promise<string> {
  const created = await http(gw.url, 'POST', '/keys', { token, body: { provider_family: 'family_d' } });
  if (created.status !== 201) throw new Error(`key: ${created.status} ${created.text}`);
  return created.body.key as string;
}

beforeAll(async () => {
  const app = express();
  app.use('/v1', responsesRoutes(gw.services));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const alice = await newFundedAccount(gw);
  const bob = await newFundedAccount(gw);
  aliceId = alice.userId;
  aliceKey = await keyOf(alice.token);
  bobKey = await keyOf(bob.token);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

async function stored(inputCount = 3, secret = 'plain') {
  const id = `resp_${randomBytes(16).toString('hex')}`;
  const input: ResponsesItem[] = Array.from({ length: inputCount }, (_, n) => ({ type: 'message', id: `msg_${id}_${n}`, role: 'user', content: [{ type: 'input_text', text: `${secret} ${n}` }] }));
  const output: ResponsesItem[] = [{ type: 'message', id: `msg_out_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: secret, annotations: [] }] }];
  const response = { id, object: 'response', created_at: 1_790_000_000, status: 'completed', model: 'gpt-test', output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
  await gw.services.responses.save({ id, userId: aliceId, apiKeyId: null, model: 'gpt-test', previousResponseId: null, input, output, response });
  return { id, input, response };
}

describe('GET/DELETE /v1/responses/{id}', () => {
  it('needs an API key (401 in the OpenAI shape)', async () => {
    const { id } = await stored();
    for (const [method, path] of [['GET', `/v1/responses/${id}`], ['GET', `/v1/responses/${id}/input_items`], ['DELETE', `/v1/responses/${id}`]] as const) {
      const none = await http(base, method, path);
      expect(none.status).toBe(401);
      expect(none.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
      const bad = await http(base, method, path, { token: 'baikal-not-a-key' });
      expect(bad.status).toBe(401);
      expect(bad.body.error.code).toBe('invalid_api_key');
    }
  });

  it('GET returns the stored response object as the client first received it', async () => {
    const { id, response } = await stored();
    const got = await http(base, 'GET', `/v1/responses/${id}`, { token: aliceKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(response);
  });

  it('another account’s response is a 404 response_not_found with none of its content', async () => {
    const secret = `SECRET-${randomBytes(4).toString('hex')}`;
    const { id } = await stored(2, secret);
    for (const [method, path] of [['GET', `/v1/responses/${id}`], ['GET', `/v1/responses/${id}/input_items`], ['DELETE', `/v1/responses/${id}`]] as const) {
      const other = await http(base, method, path, { token: bobKey });
      expect(other.status).toBe(404);
      expect(other.body.error).toMatchObject({ type: 'invalid_request_error', code: 'response_not_found' });
      expect(other.text).not.toContain(secret);
    }
    // Still there for its owner: Bob's DELETE deleted nothing.
    expect((await http(base, 'GET', `/v1/responses/${id}`, { token: aliceKey })).status).toBe(200);
  });

  it('an unknown or expired id is a 404', async () => {
    expect((await http(base, 'GET', '/v1/responses/resp_unknown', { token: aliceKey })).status).toBe(404);
    // A NUL in the path cannot reach a PostgreSQL text comparison: a plain 404, not a 500.
    expect((await http(base, 'GET', '/v1/responses/resp_%00', { token: aliceKey })).status).toBe(404);
    expect((await http(base, 'DELETE', '/v1/responses/resp_%00', { token: aliceKey })).status).toBe(404);
    const { id } = await stored();
    await gw.db.query(`update responses set expires_at = now() - interval '1 second' where id = $1`, [id]);
    const expired = await http(base, 'GET', `/v1/responses/${id}`, { token: aliceKey });
    expect(expired.status).toBe(404);
    expect(expired.body.error.code).toBe('response_not_found');
  });

  it('DELETE answers {id, object, deleted} and the response is gone; a second DELETE is a 404', async () => {
    const { id } = await stored();
    const deleted = await http(base, 'DELETE', `/v1/responses/${id}`, { token: aliceKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id, object: 'response', deleted: true });
    expect((await http(base, 'GET', `/v1/responses/${id}`, { token: aliceKey })).status).toBe(404);
    expect((await http(base, 'DELETE', `/v1/responses/${id}`, { token: aliceKey })).status).toBe(404);
  });
});

describe('GET /v1/responses/{id}/input_items', () => {
  it('lists input items newest first by default, pages with limit/after/order', async () => {
    const { id, input } = await stored(5);
    const first = await http(base, 'GET', `/v1/responses/${id}/input_items?limit=2`, { token: aliceKey });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ object: 'list', data: [input[4], input[3]], first_id: input[4]!.id, last_id: input[3]!.id, has_more: true });
    const next = await http(base, 'GET', `/v1/responses/${id}/input_items?limit=2&after=${first.body.last_id}`, { token: aliceKey });
    expect(next.body.data.map((i: ResponsesItem) => i.id)).toEqual([input[2]!.id, input[1]!.id]);
    const asc = await http(base, 'GET', `/v1/responses/${id}/input_items?order=asc&include[]=message.input_image.image_url`, { token: aliceKey });
    expect(asc.body).toMatchObject({ data: input, has_more: false });
  });

  it('bad query parameters are a 422 with SPEC’s detail shape and the OpenAI error', async () => {
    const { id } = await stored();
    const cases: [string, (string | number)[]][] = [
      ['limit=0', ['query', 'limit']],
      ['limit=101', ['query', 'limit']],
      ['limit=ten', ['query', 'limit']],
      ['order=up', ['query', 'order']],
      ['after=msg_not_in_this_response', ['query', 'after']],
      ['after=msg_%00', ['query', 'after']],
    ];
    for (const [query, loc] of cases) {
      const bad = await http(base, 'GET', `/v1/responses/${id}/input_items?${query}`, { token: aliceKey });
      expect(bad.status, query).toBe(422);
      expect(bad.body.detail[0].loc, query).toEqual(loc);
      expect(bad.body.error, query).toMatchObject({ type: 'invalid_request_error', param: loc.join('.') });
    }
  });

  it('the openai client retrieves, pages through input items (auto-paging) and deletes', async () => {
    const { id, input, response } = await stored(7);
    const client = new OpenAI({ apiKey: aliceKey, baseURL: `${base}/v1`, maxRetries: 0 });
    const got = await client.responses.retrieve(id);
    expect(got.id).toBe(id);
    expect(got.output).toEqual(response.output);
    const seen: string[] = [];
    for await (const item of client.responses.inputItems.list(id, { limit: 3, order: 'asc' })) seen.push((item as { id: string }).id);
    expect(seen).toEqual(input.map((i) => i.id));
    await client.responses.delete(id);
    await expect(client.responses.retrieve(id)).rejects.toMatchObject({ status: 404 });
  });
});
