import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { VIDEO_FIXTURES } from '../../src/simulator/video-jobs.js';

const KEY = 'sk-CANARY-video-credential';
const CANARY = 'node canary.invalid';
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: KEY, errorDetail: CANARY, name: 'primary' });
});
afterAll(async () => {
  await sim?.close();
});

const api = (path: string, init: RequestInit = {}, key: string | null = KEY) =>
  fetch(`${sim.url}${path}`, { ...init, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json' } });

const submit = (body: object) => api('/v1/videos', { method: 'POST', body: JSON.stringify(body) });

/** Submits a job and returns its id, failing the test if the submit is refused. */
async function submitJob(prompt: string, seconds: number | string = 2): Promise<string> {
  const res = await submit({ model: 'vid-1', prompt, seconds, resolution: '720p', ratio: '16:9', audio: 'off', references: [{ type: 'image', role: 'first_frame', url: 'https://example.invalid/a.png' }] });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

const poll = async (id: string) => (await (await api(`/v1/videos/${id}`)).json()) as any;

/** Polls every 15 ms until the job leaves queued/in_progress (or the deadline passes); returns every view seen. */
async function pollUntilDone(id: string, deadlineMs = 3000): Promise<any[]> {
  const seen: any[] = [];
  for (const end = Date.now() + deadlineMs; Date.now() < end; await sleep(15)) {
    seen.push(await poll(id));
    if (!['queued', 'in_progress'].includes(seen.at(-1).status)) break;
  }
  return seen;
}

/** Top-level ISO BMFF boxes, each checked to fit the file exactly. */
function mp4Boxes(mp4: Buffer): string[] {
  const boxes: string[] = [];
  for (let offset = 0; offset < mp4.length; ) {
    const size = mp4.readUInt32BE(offset);
    expect(size).toBeGreaterThanOrEqual(8);
    boxes.push(mp4.subarray(offset + 4, offset + 8).toString('ascii'));
    offset += size;
    expect(offset).toBeLessThanOrEqual(mp4.length);
  }
  return boxes;
}

const fixture = (file: string) => readFileSync(new URL(`../../src/simulator/media/${file}`, import.meta.url));

describe('the video job simulator', () => {
  it('has real H.264 MP4 fixtures', () => {
    for (const { file } of VIDEO_FIXTURES) {
      const mp4 = fixture(file);
      expect(mp4.length).toBeLessThan(20_000);
      expect(mp4.subarray(4, 8).toString('ascii')).toBe('ftyp');
      expect(mp4Boxes(mp4)).toEqual(expect.arrayContaining(['ftyp', 'moov', 'mdat']));
      expect(mp4.includes('avc1')).toBe(true);
      expect(mp4.includes('avcC')).toBe(true);
    }
  });

  it('runs a job queued → in_progress → completed, then serves the MP4', async () => {
    const before = sim.videoJobs.submits;
    const submitted = await submit({ model: 'vid-1', prompt: 'a lake at dawn [sim:start-ms=400 video-ms=400]', seconds: 2, width: 64, height: 36, multi_shot: false, prompt_extend: true });
    expect(submitted.status).toBe(200);
    const job = (await submitted.json()) as any;
    expect(job).toMatchObject({ object: 'video', status: 'queued', progress: 0, model: 'vid-1', seconds: 2 });
    expect(job.id).toMatch(/^video_[0-9a-f]+$/);
    expect(job.created_at).toBeCloseTo(Date.now() / 1000, -1);
    expect(job.completed_at).toBeUndefined();

    const seen = await pollUntilDone(job.id);
    const statuses = seen.map((view) => view.status).filter((status, i, all) => status !== all[i - 1]);
    expect(statuses).toEqual(['queued', 'in_progress', 'completed']);
    const progress = seen.map((view) => view.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const done = seen.at(-1);
    expect(done).toMatchObject({ id: job.id, progress: 100, model: 'vid-1', seconds: 2, created_at: job.created_at });
    expect(done.completed_at).toBeGreaterThanOrEqual(job.created_at);
    expect(done.error).toBeUndefined();

    const res = await api(`/v1/videos/${job.id}/content`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const mp4 = Buffer.from(await res.arrayBuffer());
    const expected = fixture('blue-2s.mp4');
    expect(Number(res.headers.get('content-length'))).toBe(expected.length);
    expect(mp4.subarray(4, 8).toString('ascii')).toBe('ftyp');
    expect(mp4.equals(expected)).toBe(true);

    const record = sim.videoJobs.jobs.get(job.id)!;
    expect(record).toMatchObject({ polls: seen.length, downloads: 1, startMs: 400, videoMs: 400 });
    expect(record.request).toMatchObject({ width: 64, height: 36, multi_shot: false, prompt_extend: true });
    expect(sim.videoJobs.submits).toBe(before + 1);
    expect(sim.requests.filter((r) => r.path.startsWith(`/v1/videos/${job.id}`))).toHaveLength(seen.length + 1);
  });

  it('serves the longer fixture for longer videos, and accepts seconds as a numeric string', async () => {
    const id = await submitJob('[sim:start-ms=0 video-ms=0]', '8');
    expect(await poll(id)).toMatchObject({ status: 'completed', seconds: 8 });
    const res = await api(`/v1/videos/${id}/content`);
    expect(Buffer.from(await res.arrayBuffer()).equals(fixture('testsrc-5s.mp4'))).toBe(true);
  });

  it('fails a job with `fail`: error generation_failed carrying the detail, and no content', async () => {
    const id = await submitJob('[sim:start-ms=10 video-ms=30 fail]');
    const seen = await pollUntilDone(id);
    const failed = seen.at(-1);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('generation_failed');
    expect(failed.error.message).toContain(CANARY);
    expect(failed.completed_at).toBeGreaterThan(0);
    const content = await api(`/v1/videos/${id}/content`);
    expect(content.status).toBe(404);
    expect(((await content.json()) as any).error.message).toContain(CANARY);
  });

  it('keeps a `stuck` job in_progress forever, with no content', async () => {
    const id = await submitJob('[sim:start-ms=0 video-ms=20 stuck]');
    await sleep(120);
    expect(await poll(id)).toMatchObject({ status: 'in_progress', progress: 99 });
    expect((await api(`/v1/videos/${id}/content`)).status).toBe(404);
    expect(sim.videoJobs.jobs.get(id)).toMatchObject({ polls: 1, downloads: 1 });
  });

  it('refuses requests without the key, on every route', async () => {
    const id = await submitJob('[sim:start-ms=0 video-ms=0]');
    for (const [path, method] of [['/v1/videos', 'POST'], [`/v1/videos/${id}`, 'GET'], [`/v1/videos/${id}/content`, 'GET']] as const) {
      for (const key of [null, 'sk-wrong']) {
        const res = await api(path, { method, ...(method === 'POST' ? { body: JSON.stringify({ model: 'vid-1', seconds: 2 }) } : {}) }, key);
        expect(res.status).toBe(401);
        expect(((await res.json()) as any).error).toMatchObject({ code: 'invalid_api_key', message: expect.stringContaining(CANARY) });
      }
    }
    expect(sim.videoJobs.jobs.get(id)).toMatchObject({ polls: 0, downloads: 0 });
  });

  it('answers 404 for an unknown id, an unknown sub-route, and content before completion', async () => {
    for (const path of ['/v1/videos/video_nope', '/v1/videos/video_nope/content']) {
      const res = await api(path);
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error).toMatchObject({ code: 'video_not_found', message: expect.stringContaining(CANARY) });
    }
    const id = await submitJob('[sim:start-ms=5000]');
    expect((await api(`/v1/videos/${id}/thumbnail`)).status).toBe(404);
    const early = await api(`/v1/videos/${id}/content`);
    expect(early.status).toBe(404);
    expect(((await early.json()) as any).error).toMatchObject({ code: 'video_not_ready', message: expect.stringContaining(CANARY) });
    expect(await poll(id)).toMatchObject({ status: 'queued', progress: 0 });
  });

  it('validates the submit: model and seconds are required', async () => {
    const jobs = sim.videoJobs.jobs.size;
    for (const [body, param] of [
      [{ prompt: 'x', seconds: 4 }, 'model'],
      [{ model: 'vid-1', prompt: 'x' }, 'seconds'],
      [{ model: 'vid-1', seconds: 'soon' }, 'seconds'],
      [{ model: 'vid-1', seconds: 4, references: [{ type: 'image' }] }, 'references'],
    ] as const) {
      const res = await submit(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param, message: expect.stringContaining(CANARY) });
    }
    const broken = await api('/v1/videos', { method: 'POST', body: '{not json' });
    expect(broken.status).toBe(400);
    expect(sim.videoJobs.jobs.size).toBe(jobs);
  });

  it('fails downloads with `content-status`, and cuts them with `cut-content`', async () => {
    const unavailable = await submitJob('[sim:start-ms=0 video-ms=0 content-status=503]');
    const res = await api(`/v1/videos/${unavailable}/content`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error.message).toContain(CANARY);
    const limited = await api(`/v1/videos/${await submitJob('[sim:start-ms=0 video-ms=0 content-status=429]')}/content`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');

    const cut = await submitJob('[sim:start-ms=0 video-ms=0 cut-content]');
    const partial = await api(`/v1/videos/${cut}/content`);
    expect(partial.status).toBe(200);
    expect(Number(partial.headers.get('content-length'))).toBe(fixture('blue-2s.mp4').length);
    await expect(partial.arrayBuffer()).rejects.toThrow();
    expect(sim.videoJobs.jobs.get(cut)!.downloads).toBe(1);
  });

  it('fails submits like an upstream: status (429 with retry-after), down, latency, hang', async () => {
    const jobs = sim.videoJobs.jobs.size;
    const limited = await submit({ model: 'vid-1', prompt: '[sim:status=429]', seconds: 4 });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as any).error).toMatchObject({ type: 'rate_limit_exceeded', message: expect.stringContaining(CANARY) });
    expect((await submit({ model: 'vid-1', prompt: '[sim:status=500]', seconds: 4 })).status).toBe(500);
    expect((await submit({ model: 'vid-1', prompt: '[sim:down=primary]', seconds: 4 })).status).toBe(503);
    expect((await submit({ model: 'vid-1', prompt: '[sim:down=backup]', seconds: 4 })).status).toBe(200);

    const started = Date.now();
    expect((await submit({ model: 'vid-1', prompt: '[sim:latency=120]', seconds: 4 })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    const hanging = fetch(`${sim.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vid-1', prompt: '[sim:hang]', seconds: 4 }),
      signal: AbortSignal.timeout(150),
    });
    await expect(hanging).rejects.toThrow(/abort|timeout/i);
    expect(sim.videoJobs.jobs.size).toBe(jobs + 2);
  });
});
