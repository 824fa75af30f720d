import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 21, videos from the official client: POST /v1/videos takes multipart/form-data as the `openai`
 * package sends it (its videos.create always does), with an `input_reference` file as the first frame,
 * under the same validation as JSON; any other content type is a 415 naming the two accepted ones.
 */

const VIDEO_MODELS = defaultCatalog.models.filter((m) => m.kind === 'video').map((m) => m.id);
/** A 1x1 PNG; the simulator never decodes it, but it is a real image all the same. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let sim: Simulator;
let gw: TestGateway;
let dir: string;
let key: string;
/** The body kinds of the POSTs the official client sent (fetch writes a FormData's multipart content type itself). */
const sentBodies: string[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'video-multipart-secret' });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-video-multipart-'));
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({ upstreams: [{ id: 'video-sim', kind: 'video-jobs', baseUrl: `${sim.url}/v1`, credentialEnv: 'VIDEO_UPSTREAM_KEY', routes: [{ group: 'cheap', models: VIDEO_MODELS }] }] }),
  );
  gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), VIDEO_UPSTREAM_KEY: 'video-multipart-secret', VIDEO_WORKERS: '2', VIDEO_POLL_MS: '40', DATA_DIR: dir });
  const account = await newFundedAccount(gw, '5');
  key = (await http(gw.url, 'POST', '/keys', { token: account.token, body: { provider_family: 'family_d' } })).body.key;
});

afterAll(async () => {
  await gw?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function client(): OpenAI {
  return new OpenAI({
    apiKey: key,
    baseURL: `${gw.url}/v1`,
    maxRetries: 0,
    fetch: async (input, init) => {
      if (init?.method === 'POST') sentBodies.push(init.body instanceof FormData ? 'multipart/form-data' : typeof init.body);
      return fetch(input, init);
    },
  });
}

/** The body the upstream received for one of our tasks, once a worker has submitted it (the simulator keeps every job). */
async function upstreamRequestOf(prompt: string): Promise<any> {
  const until = Date.now() + 5_000;
  for (;;) {
    const job = [...sim.videoJobs.jobs.values()].find((j) => j.request.prompt === prompt);
    if (job) return job.request;
    if (Date.now() > until) throw new Error(`no upstream job for ${prompt}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function completed(openai: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  const until = Date.now() + 10_000;
  for (;;) {
    const video = await openai.videos.retrieve(id);
    if (video.status === 'completed') return video;
    if (Date.now() > until || video.status === 'failed') throw new Error(`task ${id} is ${video.status}`);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
}

async function postForm(form: FormData, headers: Record<string, string> = {}) {
  const response = await fetch(`${gw.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
  return { status: response.status, body: (await response.json()) as any, headers: response.headers };
}

describe('POST /v1/videos as multipart/form-data from the official client', () => {
  it('videos.create without input_reference: fields converted (seconds from text), then retrieve and downloadContent', async () => {
    const openai = client();
    const prompt = 'Ice on Baikal [sim:start-ms=10 video-ms=40]';
    const created = await openai.videos.create({ model: 'beta3.0-t2v', prompt, seconds: '4', size: '1280x720' });
    expect(sentBodies.at(-1)).toBe('multipart/form-data');
    expect(created).toMatchObject({ id: expect.any(String), status: 'queued', model: 'beta3.0-t2v', seconds: 4 });
    expect(await upstreamRequestOf(prompt)).toMatchObject({ model: 'beta3.0-t2v', seconds: 4, width: 1280, height: 720, references: [] });
    expect(await completed(openai, created.id)).toMatchObject({ id: created.id, status: 'completed' });
    const mp4 = Buffer.from(await (await openai.videos.downloadContent(created.id)).arrayBuffer());
    expect(mp4.subarray(4, 8).toString()).toBe('ftyp');
  });

  it('videos.create with an input_reference file: it reaches the upstream as the first-frame image data URL', async () => {
    const openai = client();
    const prompt = 'The frame comes alive [sim:start-ms=10 video-ms=40]';
    const created = await openai.videos.create({ model: 'beta3.0-i2v', prompt, seconds: '2' as never, input_reference: await toFile(PNG, 'frame.png', { type: 'image/png' }) });
    expect(sentBodies.at(-1)).toBe('multipart/form-data');
    expect((await upstreamRequestOf(prompt)).references).toEqual([{ type: 'image', role: 'first_frame', url: `data:image/png;base64,${PNG.toString('base64')}` }]);
    expect((await completed(openai, created.id)).status).toBe('completed');
    expect((await openai.videos.downloadContent(created.id)).status).toBe(200);

    // A file sent without a part type takes its type from the extension.
    const untyped = 'Untyped frame [sim:start-ms=10 video-ms=40]';
    await openai.videos.create({ model: 'beta3.0-i2v', prompt: untyped, input_reference: await toFile(PNG, 'frame.jpg') });
    expect((await upstreamRequestOf(untyped)).references[0].url).toMatch(/^data:image\/jpeg;base64,/);

    // The SDK's other form, {image_url}, arrives as input_reference[image_url].
    const byUrl = 'Frame by URL [sim:start-ms=10 video-ms=40]';
    await openai.videos.create({ model: 'beta3.0-i2v', prompt: byUrl, input_reference: { image_url: 'https://images.example.test/first.png' } });
    expect((await upstreamRequestOf(byUrl)).references).toEqual([{ type: 'image', role: 'first_frame', url: 'https://images.example.test/first.png' }]);
  });

  it('nested form fields (settings[...], references[][...]) and booleans/numbers given as text', async () => {
    const form = new FormData();
    const prompt = 'Nested fields [sim:start-ms=10 video-ms=40]';
    for (const [name, value] of [
      ['model', 'alpha-3.0'], ['prompt', prompt], ['seconds', '5'], ['size', '720p'], ['aspect_ratio', '9:16'],
      ['settings[audio]', 'native'], ['settings[multi_shot]', 'true'],
      ['references[][type]', 'image'], ['references[][role]', 'first_frame'], ['references[][url]', 'https://images.example.test/a.png'],
      ['references[][type]', 'image'], ['references[][role]', 'last_frame'], ['references[][url]', 'https://images.example.test/b.png'],
    ]) form.append(name!, value!);
    const created = await postForm(form);
    expect(created.status).toBe(201);
    expect(await upstreamRequestOf(prompt)).toMatchObject({
      model: 'alpha-3.0', seconds: 5, width: 720, height: 1280, audio: 'native', multi_shot: true,
      references: [{ type: 'image', role: 'first_frame', url: 'https://images.example.test/a.png' }, { type: 'image', role: 'last_frame', url: 'https://images.example.test/b.png' }],
    });

    const extend = new FormData();
    const extendPrompt = 'Prompt extension [sim:start-ms=10 video-ms=40]';
    for (const [name, value] of [['model', 'beta3.0-t2v'], ['prompt', extendPrompt], ['prompt_extend', 'true']]) extend.append(name!, value!);
    expect((await postForm(extend)).status).toBe(201);
    expect((await upstreamRequestOf(extendPrompt)).prompt_extend).toBe(true);
  });
});

describe('the same validation as JSON, at the same locations', () => {
  it.each([
    ['out-of-range seconds, unknown size, text that is not a boolean', { model: 'beta3.0-t2v', prompt: 'x', seconds: '99', size: '999x999', prompt_extend: 'maybe' }],
    ['a missing prompt and an extra field', { model: 'beta3.0-t2v', colour: 'blue' }],
    ['input_reference on a model that takes no images', { model: 'beta3.0-t2v', prompt: 'x', input_reference: 'https://images.example.test/a.png' }],
    ['input_reference beside a first_frame reference', { model: 'beta3.0-i2v', prompt: 'x', input_reference: 'https://images.example.test/a.png', 'references[][type]': 'image', 'references[][role]': 'first_frame', 'references[][url]': 'https://images.example.test/b.png' }],
    ['an unknown model', { model: 'no-such-video', prompt: 'x' }],
  ])('%s', async (_label, fields) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    const multipart = await postForm(form);
    // The JSON twin of the form: bracketed names become nesting, values stay the same text.
    const json: Record<string, any> = {};
    for (const [name, value] of Object.entries(fields)) {
      const nested = /^references\[\]\[(\w+)\]$/.exec(name);
      if (nested) ((json.references ??= [{}])[0] as Record<string, string>)[nested[1]!] = value;
      else json[name] = value;
    }
    const asJson = await http(gw.url, 'POST', '/v1/videos', { token: key, body: json });
    expect(multipart.status).toBe(asJson.status);
    expect(multipart.status).toBeGreaterThanOrEqual(400);
    expect(multipart.body).toEqual(asJson.body);
  });

  it('pins the locations: input_reference, its file type, a file where text belongs, malformed multipart', async () => {
    const noImages = new FormData();
    noImages.append('model', 'beta3.0-t2v');
    noImages.append('prompt', 'x');
    noImages.append('input_reference', new Blob([PNG], { type: 'image/png' }), 'frame.png');
    const refused = await postForm(noImages);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'input_reference'], type: 'extra_forbidden' })]);

    const notImage = new FormData();
    notImage.append('model', 'beta3.0-i2v');
    notImage.append('input_reference', new Blob(['%PDF-1.7'], { type: 'application/pdf' }), 'doc.pdf');
    const pdf = await postForm(notImage);
    expect(pdf.status).toBe(422);
    expect(pdf.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'input_reference'], msg: expect.stringContaining('image file') })]);

    const fileAsPrompt = new FormData();
    fileAsPrompt.append('model', 'beta3.0-t2v');
    fileAsPrompt.append('prompt', new Blob(['words']), 'prompt.txt');
    const wrongField = await postForm(fileAsPrompt);
    expect(wrongField.status).toBe(422);
    expect(wrongField.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'prompt'] })]);

    const twice = new FormData();
    twice.append('model', 'beta3.0-t2v');
    twice.append('model', 'beta3.0-i2v');
    const duplicated = await postForm(twice);
    expect(duplicated.status).toBe(422);
    expect(duplicated.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'model'] })]);

    const broken = await fetch(`${gw.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: '--ABC\r\nContent-Disposition: form-data; name="model"\r\n\r\nbeta3.0-t2v\r\n--ABC--\r\n',
    });
    expect(broken.status).toBe(422);
    expect(((await broken.json()) as any).detail).toEqual([expect.objectContaining({ loc: ['body'], type: 'multipart_invalid' })]);
  });

  it('input_reference {file_id} is refused with its location (no files API here)', async () => {
    const response = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-i2v', input_reference: { file_id: 'file_123' } } });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'input_reference', 'file_id'] })]);
  });
});

describe('other content types', () => {
  it.each([
    ['text/plain', 'model=beta3.0-t2v'],
    ['application/x-www-form-urlencoded', 'model=beta3.0-t2v&prompt=x'],
    ['application/octet-stream', 'bytes'],
  ])('%s is a 415 in the OpenAI shape that names JSON and multipart', async (type, body) => {
    const response = await http(gw.url, 'POST', '/v1/videos', { token: key, rawBody: body, headers: { 'content-type': type } });
    expect(response.status).toBe(415);
    expect(response.body).toEqual({
      error: { message: `Unsupported content type "${type}": send the body as application/json or multipart/form-data`, type: 'invalid_request_error', code: 'unsupported_media_type', param: null },
    });
  });

  it('the key is checked before the content type', async () => {
    const response = await http(gw.url, 'POST', '/v1/videos', { rawBody: 'x', headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(401);
  });

  it('a form over the 25 MiB body limit is a 413', async () => {
    const form = new FormData();
    form.append('model', 'beta3.0-i2v');
    form.append('input_reference', new Blob([Buffer.alloc(26 * 1024 * 1024)], { type: 'image/png' }), 'huge.png');
    const response = await postForm(form);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('payload_too_large');
  });
});
