import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RANGES, parseRange, sendStoredObject } from '../../rest-shim/v1/ranges.js';
import { LocalVideoStorage, type StoredObject } from '../../src/storage/video-storage.js';

describe('parseRange', () => {
  const size = 1000;
  it.each([
    ['a single range', 'bytes=0-99', [{ start: 0, end: 99 }]],
    ['an open-ended range', 'bytes=900-', [{ start: 900, end: 999 }]],
    ['a suffix', 'bytes=-100', [{ start: 900, end: 999 }]],
    ['a suffix larger than the file (the whole file)', 'bytes=-5000', [{ start: 0, end: 999 }]],
    ['an end past the file (clamped)', 'bytes=990-5000', [{ start: 990, end: 999 }]],
    ['the last byte', 'bytes=999-999', [{ start: 999, end: 999 }]],
    ['several ranges, in the order asked', 'bytes=500-509, 0-9', [{ start: 500, end: 509 }, { start: 0, end: 9 }]],
    ['overlapping and adjacent ranges (coalesced)', 'bytes=0-9,5-19,20-29,100-109', [{ start: 0, end: 29 }, { start: 100, end: 109 }]],
    ['unsatisfiable members dropped', 'bytes=0-9,2000-2100', [{ start: 0, end: 9 }]],
    ['empty list elements', 'bytes=0-9,,20-29', [{ start: 0, end: 9 }, { start: 20, end: 29 }]],
    ['an upper-case unit', 'BYTES=0-0', [{ start: 0, end: 0 }]],
  ])('reads %s', (_what, header, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it.each([
    ['a start at the end', 'bytes=1000-'],
    ['a start past the end', 'bytes=5000-6000'],
    ['all ranges past the end', 'bytes=1000-1001,2000-'],
    ['bytes=-0', 'bytes=-0'],
  ])('calls %s unsatisfiable', (_what, header) => {
    expect(parseRange(header, size)).toBe('unsatisfiable');
  });

  it('calls any range of an empty file unsatisfiable, except a suffix (which has nothing to send, so the header is ignored)', () => {
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=-10', 0)).toBeNull();
  });

  it.each([
    ['another unit', 'items=0-9'],
    ['no unit', '0-9'],
    ['garbage', 'bytes=abc'],
    ['a lone dash', 'bytes=-'],
    ['no dash', 'bytes=10'],
    ['last before first', 'bytes=10-5'],
    ['one bad member among good ones', 'bytes=0-9,x-y'],
    ['negative numbers', 'bytes=-5-10'],
    ['an empty set', 'bytes='],
    ['spaces inside a range', 'bytes=0 - 9'],
    ['too many ranges', `bytes=${Array.from({ length: MAX_RANGES + 1 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',')}`],
  ])('ignores %s', (_what, header) => {
    expect(parseRange(header, size)).toBeNull();
  });

  it(`accepts exactly ${MAX_RANGES} ranges`, () => {
    const header = `bytes=${Array.from({ length: MAX_RANGES }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',')}`;
    expect(parseRange(header, size)).toHaveLength(MAX_RANGES);
  });
});

const SIZE = 100_000;
const DATA = randomBytes(SIZE);
const ETAG = '"v1-abc"';
const MODIFIED = new Date('2026-01-02T03:04:05Z');

let failing: Promise<string> | null = null;
let dir: string;
let storage: LocalVideoStorage;
let server: Server;
let base: string;
/** The source stream behind the last request to /endless, to see whether it was stopped. */
let endless: { produced: number; destroyed: boolean; outcome?: string } | null = null;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-videos-'));
  storage = new LocalVideoStorage(dir);
  expect(await storage.put('task_1', Readable.from([DATA.subarray(0, 40_000), DATA.subarray(40_000)]), 'video/mp4', SIZE)).toEqual({ size: SIZE });

  const app = express();
  app.get('/videos/:key', async (req, res, next) => {
    try {
      const object = await storage.get(req.params.key);
      if (!object) {
        res.status(404).end();
        return;
      }
      await sendStoredObject(req, res, object, { etag: ETAG, lastModified: MODIFIED, filename: 'clip "1".mp4' });
    } catch (error) {
      next(error);
    }
  });
  // 1 GiB made up on the fly, to see that a disconnect stops the read.
  app.get('/endless', async (req, res) => {
    const state: NonNullable<typeof endless> = { produced: 0, destroyed: false };
    endless = state;
    const object: StoredObject = {
      size: 1 << 30,
      contentType: 'video/mp4',
      open: () =>
        new Readable({
          read() {
            state.produced += 65_536;
            this.push(Buffer.alloc(65_536, 1));
          },
          destroy(error, callback) {
            state.destroyed = true;
            callback(error);
          },
        }),
    };
    sendStoredObject(req, res, object).then(
      () => (state.outcome = 'resolved'),
      (error: Error) => (state.outcome = `rejected: ${error.message}`),
    );
  });
  // A source that fails after some bytes, as a disk error would.
  app.get('/failing', async (req, res) => {
    const object: StoredObject = {
      size: 1000,
      contentType: 'video/mp4',
      open: () =>
        Readable.from((async function* () {
          yield Buffer.alloc(100, 2);
          throw new Error('disk on fire');
        })()),
    };
    failing = sendStoredObject(req, res, object).then(() => 'resolved', (error: Error) => `rejected: ${error.message}`);
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function get(headers: Record<string, string> = {}, method = 'GET', url = `${base}/videos/task_1`) {
  const response = await fetch(url, { method, headers });
  return { response, body: Buffer.from(await response.arrayBuffer()) };
}

/** Splits a multipart/byteranges body into its parts' headers and bytes. */
function parseMultipart(body: Buffer, contentType: string): { headers: Record<string, string>; bytes: Buffer }[] {
  const boundary = /boundary=([^;]+)/.exec(contentType)?.[1];
  expect(boundary).toBeTruthy();
  const text = body.toString('latin1'); // one char per byte, so offsets are byte offsets
  const delimiter = `--${boundary}`;
  expect(text.startsWith(`${delimiter}\r\n`)).toBe(true);
  expect(text.endsWith(`\r\n${delimiter}--\r\n`)).toBe(true);
  const inner = text.slice(delimiter.length + 2, text.length - (delimiter.length + 6));
  return inner.split(`\r\n${delimiter}\r\n`).map((part) => {
    const split = part.indexOf('\r\n\r\n');
    const headers = Object.fromEntries(
      part.slice(0, split).split('\r\n').map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    return { headers, bytes: Buffer.from(part.slice(split + 4), 'latin1') };
  });
}

describe('sendStoredObject over HTTP', () => {
  it('sends the whole file with 200 and its validators when there is no Range', async () => {
    const { response, body } = await get();
    expect(response.status).toBe(200);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('content-type')).toBe('video/mp4');
    expect(response.headers.get('content-length')).toBe(String(SIZE));
    expect(response.headers.get('etag')).toBe(ETAG);
    expect(response.headers.get('last-modified')).toBe(MODIFIED.toUTCString());
    expect(response.headers.get('content-disposition')).toBe('inline; filename="clip \\"1\\".mp4"');
    expect(response.headers.get('content-range')).toBeNull();
    expect(body.equals(DATA)).toBe(true);
  });

  it.each([
    ['the first bytes', 'bytes=0-99', 0, 99],
    ['a suffix', 'bytes=-500', SIZE - 500, SIZE - 1],
    ['a suffix larger than the file', 'bytes=-200000', 0, SIZE - 1],
    ['an open-ended range', 'bytes=99000-', 99_000, SIZE - 1],
    ['a middle slice', 'bytes=40000-60000', 40_000, 60_000],
    ['a range clamped at the end', 'bytes=99990-1000000', 99_990, SIZE - 1],
  ])('sends %s with 206 and Content-Range', async (_what, range, start, end) => {
    const { response, body } = await get({ range });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${SIZE}`);
    expect(response.headers.get('content-length')).toBe(String(end - start + 1));
    expect(response.headers.get('content-type')).toBe('video/mp4');
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(body.equals(DATA.subarray(start, end + 1))).toBe(true);
  });

  it('sends several ranges as multipart/byteranges, one part per range, in the order asked', async () => {
    const { response, body } = await get({ range: 'bytes=50000-50099, 0-9,-10' });
    expect(response.status).toBe(206);
    const type = response.headers.get('content-type')!;
    expect(type).toMatch(/^multipart\/byteranges; boundary=\S+$/);
    expect(response.headers.get('content-length')).toBe(String(body.length));
    expect(response.headers.get('content-range')).toBeNull();
    const parts = parseMultipart(body, type);
    const expected = [[50_000, 50_099], [0, 9], [SIZE - 10, SIZE - 1]] as const;
    expect(parts).toHaveLength(expected.length);
    parts.forEach((part, i) => {
      const [start, end] = expected[i]!;
      expect(part.headers).toEqual({ 'content-type': 'video/mp4', 'content-range': `bytes ${start}-${end}/${SIZE}` });
      expect(part.bytes.equals(DATA.subarray(start, end + 1))).toBe(true);
    });
  });

  it('coalesces overlapping ranges, down to a plain 206 when one range is left', async () => {
    const { response, body } = await get({ range: 'bytes=0-9,5-19,20-29' });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes 0-29/${SIZE}`);
    expect(body.equals(DATA.subarray(0, 30))).toBe(true);
  });

  it('answers 416 with Content-Range: bytes */size when nothing is satisfiable', async () => {
    for (const range of [`bytes=${SIZE}-`, 'bytes=200000-300000', 'bytes=-0']) {
      const { response, body } = await get({ range });
      expect(response.status, range).toBe(416);
      expect(response.headers.get('content-range')).toBe(`bytes */${SIZE}`);
      expect(body.length).toBe(0);
    }
  });

  it('ignores a malformed Range and sends the whole file', async () => {
    for (const range of ['items=0-9', 'bytes=garbage', 'bytes=10-5']) {
      const { response, body } = await get({ range });
      expect(response.status, range).toBe(200);
      expect(body.equals(DATA)).toBe(true);
    }
  });

  it('honours If-Range only when it matches: a strong ETag or the exact Last-Modified', async () => {
    const ranged = async (ifRange: string) => (await get({ range: 'bytes=0-99', 'if-range': ifRange })).response.status;
    expect(await ranged(ETAG)).toBe(206);
    expect(await ranged(MODIFIED.toUTCString())).toBe(206);
    expect(await ranged('"v0-old"')).toBe(200);
    expect(await ranged(`W/${ETAG}`)).toBe(200); // weak tags never match in If-Range
    expect(await ranged(new Date(MODIFIED.getTime() + 1000).toUTCString())).toBe(200);
    expect(await ranged('not a validator')).toBe(200);
    const { response, body } = await get({ range: 'bytes=0-99', 'if-range': '"v0-old"' });
    expect(response.headers.get('content-length')).toBe(String(SIZE));
    expect(body.equals(DATA)).toBe(true);
  });

  it('answers HEAD with the same status and headers as GET, and no body', async () => {
    const full = await get({}, 'HEAD');
    expect(full.response.status).toBe(200);
    expect(full.response.headers.get('content-length')).toBe(String(SIZE));
    expect(full.response.headers.get('content-type')).toBe('video/mp4');
    expect(full.response.headers.get('accept-ranges')).toBe('bytes');
    expect(full.response.headers.get('etag')).toBe(ETAG);
    expect(full.body.length).toBe(0);

    const slice = await get({ range: 'bytes=10-19' }, 'HEAD');
    expect(slice.response.status).toBe(206);
    expect(slice.response.headers.get('content-range')).toBe(`bytes 10-19/${SIZE}`);
    expect(slice.response.headers.get('content-length')).toBe('10');
    expect(slice.body.length).toBe(0);

    const multi = await get({ range: 'bytes=0-1,10-11' }, 'HEAD');
    const multiGet = await get({ range: 'bytes=0-1,10-11' });
    expect(multi.response.status).toBe(206);
    // The boundary is random, so the lengths of HEAD and GET agree while the boundaries differ.
    expect(multi.response.headers.get('content-length')).toBe(multiGet.response.headers.get('content-length'));
    expect(multi.body.length).toBe(0);

    const none = await get({ range: `bytes=${SIZE}-` }, 'HEAD');
    expect(none.response.status).toBe(416);
  });

  it('stops reading the source when the client disconnects', async () => {
    const abort = new AbortController();
    const response = await fetch(`${base}/endless`, { signal: abort.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    await reader.cancel().catch(() => undefined);
    const deadline = Date.now() + 5000;
    while (!(endless?.destroyed && endless.outcome) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(endless?.destroyed).toBe(true);
    expect(endless?.outcome).toBe('resolved'); // a client going away is not an error
    expect(endless!.produced).toBeLessThan(1 << 30);
  });

  it('tears the connection down, rather than ending the body short, when the source fails midway', async () => {
    const outcome = fetch(`${base}/failing`).then((response) => response.arrayBuffer()).then(() => 'complete', () => 'aborted');
    expect(await outcome).toBe('aborted');
    expect(await failing).toBe('rejected: disk on fire');
  });
});

describe('LocalVideoStorage', () => {
  it('refuses keys that could leave its directory or are not plain ids', async () => {
    for (const key of ['../escape', '..', 'a/b', 'a\\b', '.hidden', 'task.json', '', 'x'.repeat(129), 'tâche', '/etc/passwd']) {
      await expect(storage.put(key, Readable.from([Buffer.from('x')]), 'video/mp4'), key).rejects.toThrow(/invalid video storage key/);
      await expect(storage.get(key), key).rejects.toThrow(/invalid video storage key/);
      await expect(storage.delete(key), key).rejects.toThrow(/invalid video storage key/);
    }
    expect((await readdir(dir)).sort()).toEqual(['task_1', 'task_1.json']);
  });

  it('leaves nothing behind when the body does not have the expected size, or fails midway', async () => {
    const body = () => Readable.from([randomBytes(1000), randomBytes(1000)]);
    await expect(storage.put('short', body(), 'video/mp4', 3000)).rejects.toThrow(/expected 3000/);
    await expect(storage.put('long', body(), 'video/mp4', 1500)).rejects.toThrow(/expected 1500/);
    async function* broken() {
      yield randomBytes(1000);
      throw new Error('upstream went away');
    }
    await expect(storage.put('broken', broken(), 'video/mp4')).rejects.toThrow(/upstream went away/);
    expect(await storage.get('short')).toBeNull();
    expect(await storage.get('long')).toBeNull();
    expect(await storage.get('broken')).toBeNull();
    expect((await readdir(dir)).sort()).toEqual(['task_1', 'task_1.json']);
  });

  it('returns null for a missing key, and stores, reads and deletes with its content type', async () => {
    expect(await storage.get('nope')).toBeNull();
    const { size } = await storage.put('webm_1', (async function* () {
      yield new TextEncoder().encode('hello ');
      yield new TextEncoder().encode('world');
    })(), 'video/webm');
    expect(size).toBe(11);
    const object = (await storage.get('webm_1'))!;
    expect(object).toMatchObject({ size: 11, contentType: 'video/webm' });
    const read = async (range?: { start: number; end: number }) => {
      const chunks: Buffer[] = [];
      for await (const chunk of object.open(range)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString();
    };
    expect(await read()).toBe('hello world');
    expect(await read({ start: 6, end: 10 })).toBe('world');
    await storage.delete('webm_1');
    await storage.delete('webm_1'); // deleting twice is fine
    expect(await storage.get('webm_1')).toBeNull();
    expect((await readdir(dir)).sort()).toEqual(['task_1', 'task_1.json']);
  });
});
