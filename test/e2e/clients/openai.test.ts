import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { billedInCabinet, everyCallBilled, startDemoGateway, startRecordingGateway, type ClientsGateway } from '../../helpers/clients-gateway.js';
import { upstreamCall } from '../../helpers/inference.js';

/**
 * The official `openai` client (7.57.0) against the built gateway in demo mode: everything a user of the
 * SDK reaches for first, each billed request found in the cabinet with its cost. The retry test drives a
 * recording upstream of its own (it must take the upstream down and up between attempts).
 */
let demo: ClientsGateway;
let client: OpenAI;

const TEXT = 'baikal is the deepest lake on earth and';
const City = z.object({ city: z.string(), population: z.number() });

beforeAll(async () => {
  demo = await startDemoGateway({ VIDEO_POLL_MS: '100' });
  client = new OpenAI({ apiKey: demo.keys.family_a, baseURL: `${demo.url}/v1`, maxRetries: 0, timeout: 30_000, fetch: demo.fetch });
});
afterAll(async () => {
  await demo?.close();
});

describe('openai 7.57.0: chat completions', () => {
  it('create (JSON) and create (stream with usage), both billed in the cabinet', async () => {
    const from = demo.calls.length;
    const json = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'Hello' }] });
    expect(json.choices[0]!.message.content).toBe(TEXT);
    expect(json.usage!.prompt_tokens).toBeGreaterThan(0);
    let streamed = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'Stream [sim:words=5]' }], stream: true, stream_options: { include_usage: true } })) {
      streamed += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(streamed).toBe('baikal is the deepest lake');
    expect(usage!.completion_tokens).toBe(5);
    const events = await everyCallBilled(demo, from);
    expect(events.map((e) => e.endpoint)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
  });

  it('chat.completions.parse with zodResponseFormat: the answer is JSON of the schema, parsed', async () => {
    const from = demo.calls.length;
    const completion = await client.chat.completions.parse({
      model: 'gen-5.6-luna',
      messages: [{ role: 'user', content: 'The largest city on Lake Baikal, as JSON' }],
      response_format: zodResponseFormat(City, 'city'),
    });
    const message = completion.choices[0]!.message;
    expect(message.refusal ?? null).toBeNull();
    expect(City.safeParse(message.parsed).success).toBe(true);
    await everyCallBilled(demo, from);
  });

  it('runTools: the SDK calls the tool, sends its result back, and ends with the model text', async () => {
    const from = demo.calls.length;
    const seen: unknown[] = [];
    const runner = client.chat.completions.runTools({
      model: 'gen-5.6-luna',
      messages: [{ role: 'user', content: 'Weather in Irkutsk? [sim:tool=get_weather]' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] },
            parse: JSON.parse,
            function: (args: { city: string }) => {
              seen.push(args);
              return '-20C and clear';
            },
          },
        },
      ],
    });
    expect(await runner.finalContent()).toBe(TEXT);
    expect(seen).toEqual([{ city: 'Irkutsk', unit: 'celsius' }]);
    expect(await everyCallBilled(demo, from)).toHaveLength(2);
  });
});

describe('openai 7.57.0: responses', () => {
  it('responses.create and responses.stream, billed', async () => {
    const from = demo.calls.length;
    const response = await client.responses.create({ model: 'gen-5.6-luna', input: 'Hello' });
    expect(response.output_text).toBe(TEXT);
    expect(response.status).toBe('completed');
    const stream = client.responses.stream({ model: 'gen-5.6-luna', input: 'Stream [sim:words=4]' });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toBe('baikal is the deepest');
    expect(final.usage!.output_tokens).toBe(4);
    const events = await everyCallBilled(demo, from);
    expect(events.map((e) => e.endpoint)).toEqual(['/v1/responses', '/v1/responses']);
  });

  it('responses.parse with zodTextFormat: output_parsed is an object of the schema', async () => {
    const from = demo.calls.length;
    const response = await client.responses.parse({ model: 'gen-5.6-luna', input: 'The largest city on Lake Baikal', text: { format: zodTextFormat(City, 'city') } });
    expect(City.safeParse(response.output_parsed).success).toBe(true);
    await everyCallBilled(demo, from);
  });

  it('previous_response_id: a second turn continues a stored response', async () => {
    const first = await client.responses.create({ model: 'gen-5.6-luna', input: 'Remember: the lake is Baikal.' });
    const second = await client.responses.create({ model: 'gen-5.6-luna', previous_response_id: first.id, input: 'Which lake? [sim:words=2]' });
    expect(second.output_text).toBe('baikal is');
    expect(second.previous_response_id).toBe(first.id);
    // Billed once each: the second bills its own tokens.
    const [a, b] = await Promise.all([billedInCabinet(demo, demo.calls.at(-2)!.requestId!), billedInCabinet(demo, demo.calls.at(-1)!.requestId!)]);
    expect(a.request_id).not.toBe(b.request_id);
  });
});

describe('openai 7.57.0: images and videos', () => {
  it('images.generate: one PNG, billed', async () => {
    const from = demo.calls.length;
    const image = await client.images.generate({ model: 'img-1.5', prompt: 'Lake Baikal in winter', size: '1024x1024' });
    expect(Buffer.from(image.data![0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const [event] = await everyCallBilled(demo, from);
    expect(event!.endpoint).toBe('/v1/images/generations');
  });

  it('videos.create (multipart, as the SDK sends it) / retrieve until completed / downloadContent an MP4, billed', async () => {
    const videos = new OpenAI({ apiKey: demo.keys.family_d, baseURL: `${demo.url}/v1`, maxRetries: 0, timeout: 30_000, fetch: demo.fetch });
    const from = demo.calls.length;
    const created = await videos.videos.create({ model: 'alpha-3.0', prompt: 'Ice on Lake Baikal [sim:start-ms=50 video-ms=100]', seconds: '4', size: '1280x720' });
    expect(created.id).toBeTruthy();
    let video = created;
    for (let i = 0; i < 100 && video.status !== 'completed' && video.status !== 'failed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      video = await videos.videos.retrieve(created.id);
    }
    expect(video.status).toBe('completed');
    const content = await videos.videos.downloadContent(created.id);
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(bytes.subarray(4, 8).toString()).toBe('ftyp');
    const [event] = await everyCallBilled(demo, from, (c) => c.path === '/v1/videos');
    expect(event!.endpoint).toBe('/v1/videos');
  });
});

describe('openai 7.57.0: models', () => {
  it('models.list lists the public models with their groups and public prices; models.retrieve one', async () => {
    const ids: string[] = [];
    const items: any[] = [];
    for await (const model of client.models.list()) {
      ids.push(model.id);
      items.push(model);
    }
    expect(ids).toEqual(expect.arrayContaining(['gen-5.6-luna', 'img-1.5', 'alpha-3.0', 'lm-opus-5']));
    // SPEC.md 4.6: "list of public models with groups and public prices" (in the OpenAI list shape).
    const luna = JSON.stringify(items.find((m) => m.id === 'gen-5.6-luna'));
    expect(luna).toContain('cheap');
    expect(luna).toContain('0.016');
    const one = await client.models.retrieve('gen-5.6-luna');
    expect(one).toMatchObject({ id: 'gen-5.6-luna', object: 'model' });
  });
});

describe('openai 7.57.0: error classes', () => {
  it('AuthenticationError on a bad key, NotFoundError on an unknown model, PermissionDeniedError on a key of another family; each with its .code', async () => {
    const bad = new OpenAI({ apiKey: 'baikal-sk-not-a-real-key', baseURL: `${demo.url}/v1`, maxRetries: 0 });
    const unauthenticated = await bad.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unauthenticated as InstanceType<typeof OpenAI.APIError>).code).toBeTruthy();

    const notFound = await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(OpenAI.NotFoundError);
    expect((notFound as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
    const notFoundModel = await client.models.retrieve('no-such-model').catch((e: unknown) => e);
    expect(notFoundModel).toBeInstanceOf(OpenAI.NotFoundError);

    const familyB = new OpenAI({ apiKey: demo.keys.family_b, baseURL: `${demo.url}/v1`, maxRetries: 0 });
    const denied = await familyB.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((denied as InstanceType<typeof OpenAI.APIError>).code).toBe('key_scope_denied');
    expect((denied as InstanceType<typeof OpenAI.APIError>).requestID).toBeTruthy();
  });
});

describe('openai 7.57.0: retries (recording upstream)', () => {
  it('a 503 from the upstream, then success: maxRetries retries and the answer is billed once', async () => {
    const rec = await startRecordingGateway();
    try {
      let failures = 0;
      // The upstream is down for the first attempt only: after the client sees that failure, it comes back up.
      const fetchOnce: typeof fetch = async (input, init) => {
        const response = await rec.fetch(input, init);
        if (response.status >= 500 || response.status === 429) {
          failures += 1;
          rec.upstream!.setDown(false);
        }
        return response;
      };
      const retrying = new OpenAI({ apiKey: rec.keys.family_a, baseURL: `${rec.url}/v1`, maxRetries: 2, timeout: 30_000, fetch: fetchOnce });
      rec.upstream!.setDown(true);
      const completion = await retrying.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'Hello after an outage [sim:words=3]' }] });
      expect(completion.choices[0]!.message.content).toBe('baikal is the');
      expect(failures).toBe(1);
      expect(rec.calls.map((c) => c.status)).toEqual([expect.any(Number), 200]);
      expect([429, 502, 503]).toContain(rec.calls[0]!.status);
      // What reached the upstream the second time is the same request.
      expect(upstreamCall(rec.upstream!, completion._request_id!).body.messages.at(-1).content).toContain('Hello after an outage');
      const events = await everyCallBilled(rec, 0);
      expect(events).toHaveLength(1);
    } finally {
      await rec.close();
    }
  });
});
