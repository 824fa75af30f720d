import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway, type ClientsGateway } from '../helpers/clients-gateway.js';
import { ROOT } from '../helpers/process.js';

/**
 * The API (`/v1`) called from a page of another origin in a real Chromium, as a web app calls OpenAI's or
 * Anthropic's: the official OpenAI SDK itself (its ESM build, `dangerouslyAllowBrowser`) and the requests the
 * Anthropic SDK sends from a browser, JSON and streams, errors readable as errors. The cabinet's own paths
 * (cookie sessions) stay closed to other origins.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OPENAI_SDK = path.join(ROOT, 'node_modules/openai');

let gateway: ClientsGateway;
let site: Server;
let siteUrl: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  gateway = await startDemoGateway({ NODE_ENV: 'development', STATUS_PROBE_SECONDS: '0' });
  // Another origin (another port): a blank page, and the OpenAI SDK's files as a browser would load them.
  site = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    if (url.pathname.startsWith('/openai/')) {
      const file = path.join(OPENAI_SDK, path.normalize(url.pathname.slice('/openai/'.length)));
      if (!file.startsWith(OPENAI_SDK)) return void res.writeHead(404).end();
      void readFile(file).then(
        (body) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(body),
        () => res.writeHead(404).end(),
      );
      return;
    }
    // The SDK is loaded by the page itself (a dynamic import inside page.evaluate would be rewritten by vitest).
    const html = `<!doctype html><title>another site</title><script type="module">import OpenAI from '/openai/index.mjs'; window.OpenAI = OpenAI;</script>`;
    res.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  expect(new URL(siteUrl).origin).not.toBe(new URL(gateway.url).origin);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  page = await browser.newPage();
  await page.goto(siteUrl);
  await page.waitForFunction(() => 'OpenAI' in globalThis);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  site?.close();
  await gateway?.close();
});

describe('the API from a page of another origin', () => {
  it('the official OpenAI SDK in the browser: a completion, a stream, the request id, the model list, Responses, a refusal it can read', async () => {
    const result = await page.evaluate(
      async ({ baseURL, apiKey }) => {
        const OpenAI = (globalThis as any).OpenAI;
        const client = new OpenAI({ baseURL, apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
        const messages = [{ role: 'user', content: 'Tell me about lake Baikal' }];
        const { data: completion, response } = await client.chat.completions.create({ model: 'gen-5.6-luna', messages }).withResponse();
        let streamed = '';
        let usage = null;
        const stream = await client.chat.completions.create({ model: 'gen-5.6-luna', messages, stream: true, stream_options: { include_usage: true } });
        for await (const chunk of stream) {
          streamed += chunk.choices[0]?.delta?.content ?? '';
          usage = chunk.usage ?? usage;
        }
        const models = [];
        for await (const model of client.models.list()) models.push(model.id);
        const answer = await client.responses.create({ model: 'gen-5.6-luna', input: 'Tell me about lake Baikal' });
        let refused = null;
        try {
          await new OpenAI({ baseURL, apiKey: 'baikal-sk-not-a-key', dangerouslyAllowBrowser: true, maxRetries: 0 }).chat.completions.create({ model: 'gen-5.6-luna', messages });
        } catch (error: any) {
          refused = { name: error.constructor.name, status: error.status, code: error.code };
        }
        return { content: completion.choices[0].message.content, requestId: response.headers.get('x-request-id'), streamed, usage, models, output: answer.output_text, refused };
      },
      { baseURL: `${gateway.url}/v1`, apiKey: gateway.keys.family_a },
    );
    expect(result.content).toMatch(/\w/);
    expect(result.requestId).toMatch(/^req_/);
    expect(result.streamed).toMatch(/\w/);
    expect(result.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    expect(result.models).toContain('gen-5.6-luna');
    expect(result.output).toMatch(/\w/);
    // An error the SDK reads as such (status and code), not a network failure the browser hid.
    expect(result.refused).toEqual({ name: 'AuthenticationError', status: 401, code: 'invalid_api_key' });
  }, 60_000);

  it('Messages as the Anthropic SDK sends them from a browser (x-api-key, anthropic-* headers): JSON and a stream', async () => {
    const result = await page.evaluate(
      async ({ url, apiKey }) => {
        const headers = { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', 'anthropic-dangerous-direct-browser-access': 'true', 'x-stainless-lang': 'js' };
        const body = { model: 'lm-opus-5', max_tokens: 64, messages: [{ role: 'user', content: 'Tell me about lake Baikal' }] };
        const json = await fetch(`${url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
        const message: any = await json.json();
        const streamed = await fetch(`${url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify({ ...body, stream: true }) });
        const events = await streamed.text();
        return { status: json.status, type: message.type, text: message.content?.[0]?.text, requestId: json.headers.get('request-id'), streamStatus: streamed.status, events };
      },
      { url: gateway.url, apiKey: gateway.keys.family_b },
    );
    expect(result).toMatchObject({ status: 200, type: 'message', streamStatus: 200 });
    expect(result.text).toMatch(/\w/);
    expect(result.requestId).toMatch(/^req_/);
    expect(result.events).toContain('event: message_start');
    expect(result.events).toContain('event: message_stop');
  }, 60_000);

  it('the cabinet stays same-origin: its REST, GraphQL and tRPC answers are not readable from another origin', async () => {
    const blocked = await page.evaluate(async (url) => {
      const attempts: [string, RequestInit][] = [
        [`${url}/auth/me`, { credentials: 'include' }],
        [`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { userId } }' }) }],
        [`${url}/trpc/keys.list`, {}],
        [`${url}/usage/summary`, {}],
      ];
      const outcomes = [];
      for (const [target, init] of attempts) {
        try {
          const response = await fetch(target, init);
          outcomes.push(`${target}: read ${response.status}`);
        } catch (error) {
          outcomes.push(`${target}: ${(error as Error).name}`);
        }
      }
      return outcomes;
    }, gateway.url);
    expect(blocked).toEqual([`${gateway.url}/auth/me: TypeError`, `${gateway.url}/graphql: TypeError`, `${gateway.url}/trpc/keys.list: TypeError`, `${gateway.url}/usage/summary: TypeError`]);
  }, 30_000);
});
