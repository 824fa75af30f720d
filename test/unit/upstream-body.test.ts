import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/shared/cancellation.js';
import { BodyTooLargeError, dispatchHandler, type UpstreamAnswer } from '../../src/upstreams/upstream-body.js';

/** What the server saw of one answer: bytes the socket took, whether it had to wait for the reader, how it ended. */
interface Sent {
  written: number;
  waitedForReader: boolean;
  finished: boolean;
  closedEarly: boolean;
}

const MB = 1024 * 1024;
/**
 * More than loopback sockets can hold between a server and a reader that has stopped (here the receive
 * buffer may grow to 32 MiB and the send buffer to 4 MiB), so an upstream that finished writing it
 * proves the reader took it in.
 */
const BEYOND_SOCKET_BUFFERS = 48 * MB;

/** A body whose every byte says where it sits, so a lost, repeated or reordered chunk shows. */
function patterned(size: number): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 10)) & 0xff;
  return bytes;
}

let server: Server;
let pool: Pool;
const sent = new Map<string, Sent>();

/** Writes `body` in `piece`-byte writes, honouring backpressure, `gapMs` apart; `cutAt` destroys the socket there. */
async function writeAll(res: ServerResponse, id: string, body: Buffer, piece: number, gapMs = 0, cutAt = Infinity): Promise<void> {
  const seen: Sent = { written: 0, waitedForReader: false, finished: false, closedEarly: false };
  sent.set(id, seen);
  res.on('close', () => (seen.closedEarly = !res.writableFinished));
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  for (let at = 0; at < body.length && !res.destroyed; at += piece) {
    if (at >= cutAt) return void res.socket?.destroy();
    const accepted = res.write(body.subarray(at, at + piece));
    seen.written = at + piece;
    if (!accepted) {
      seen.waitedForReader = true;
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
    if (gapMs) await sleep(gapMs);
  }
  if (!res.destroyed) res.end(() => (seen.finished = true));
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  for await (const _ of req);
  const url = new URL(req.url!, 'http://x');
  const id = url.searchParams.get('id')!;
  const size = Number(url.searchParams.get('size') ?? 0);
  if (url.pathname === '/late') await sleep(300);
  if (url.pathname === '/utf8') {
    // Every letter is two bytes in UTF-8; one-byte writes split each of them.
    const bytes = Buffer.from('Привет, мир! '.repeat(40));
    return writeAll(res, id, bytes, 1);
  }
  return writeAll(res, id, patterned(size), Number(url.searchParams.get('piece') ?? 64 * 1024), Number(url.searchParams.get('gap') ?? 0), Number(url.searchParams.get('cut') ?? Infinity));
}

function call(path: string, signal: Cancellation = new Cancellation()): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => pool.dispatch({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: '{}' }, dispatchHandler(signal, resolve, reject)));
}

/** Waits until the server's record of `id` satisfies `done` (its writes and socket run on their own). */
async function until(id: string, done: (seen: Sent) => boolean): Promise<Sent> {
  for (let i = 0; i < 200; i++) {
    const seen = sent.get(id);
    if (seen && done(seen)) return seen;
    await sleep(10);
  }
  throw new Error(`server state of ${id} never matched: ${JSON.stringify(sent.get(id))}`);
}

beforeAll(async () => {
  server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 8 });
});

afterAll(async () => {
  await pool.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('an upstream body read from the dispatch handler', () => {
  it('reads a body whole, multi-byte letters split across chunks included', async () => {
    const answer = await call('/utf8?id=utf8');
    expect(answer.status).toBe(200);
    expect(await answer.body.text()).toBe('Привет, мир! '.repeat(40));
  });

  it('keeps what arrives before a reader starts only up to its high-water mark: the upstream waits, then every byte arrives in order', async () => {
    const answer = await call(`/big?id=unread&size=${BEYOND_SOCKET_BUFFERS}`);
    const seen = await until('unread', (s) => s.waitedForReader);
    await sleep(200);
    // What the sockets hold aside, the rest waited for the reader.
    expect(seen.finished).toBe(false);
    expect(seen.written).toBeLessThan(BEYOND_SOCKET_BUFFERS);
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(patterned(BEYOND_SOCKET_BUFFERS))).toBe(true);
    await until('unread', (s) => s.finished);
  });

  it('pauses the upstream while a slow reader is busy with a chunk: it runs ahead only by the high-water mark and what the sockets hold', async () => {
    const size = 2 * BEYOND_SOCKET_BUFFERS;
    const answer = await call(`/big?id=slow&size=${size}&piece=${256 * 1024}`);
    const chunks: Buffer[] = [];
    let received = 0;
    let receivedWhenServerFinished: number | null = null;
    for await (const chunk of answer.body) {
      chunks.push(chunk);
      received += chunk.length;
      if (receivedWhenServerFinished === null && sent.get('slow')?.finished) receivedWhenServerFinished = received;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(Buffer.concat(chunks).equals(patterned(size))).toBe(true);
    // Paused, the upstream can only run ahead of the reader by what the body and the sockets hold, so it
    // finishes writing late; a body that kept everything would let it finish almost at once.
    expect(receivedWhenServerFinished ?? size).toBeGreaterThan(size - BEYOND_SOCKET_BUFFERS);
    expect(sent.get('slow')).toMatchObject({ waitedForReader: true, closedEarly: false });
  });

  it('hands each chunk on as it arrives, not at the end', async () => {
    const answer = await call(`/paced?id=paced&size=${40 * 1024}&piece=1024&gap=2`);
    const chunks: Buffer[] = [];
    let serverDoneAtFirstChunk: boolean | null = null;
    for await (const chunk of answer.body) {
      serverDoneAtFirstChunk ??= sent.get('paced')!.finished;
      chunks.push(chunk);
    }
    expect(serverDoneAtFirstChunk).toBe(false);
    expect(chunks.length).toBeGreaterThan(1);
    expect(Buffer.concat(chunks).equals(patterned(40 * 1024))).toBe(true);
  });

  it('fails past its limit and ends the upstream call', async () => {
    const answer = await call(`/big?id=limit&size=${BEYOND_SOCKET_BUFFERS}`);
    await expect(answer.body.text(1 * MB)).rejects.toBeInstanceOf(BodyTooLargeError);
    const seen = await until('limit', (s) => s.closedEarly);
    expect(seen.finished).toBe(false);
  });

  it('rejects a reader when the upstream cuts the body before its end', async () => {
    const answer = await call(`/cut?id=cut&size=${2 * MB}&piece=16384&cut=${256 * 1024}`);
    const received: Buffer[] = [];
    await expect(
      (async () => {
        for await (const chunk of answer.body) received.push(chunk);
      })(),
    ).rejects.toThrow();
    expect(Buffer.concat(received).equals(patterned(2 * MB).subarray(0, Buffer.concat(received).length))).toBe(true);
    await expect(call(`/cut?id=cut2&size=${2 * MB}&piece=16384&cut=${256 * 1024}`).then((next) => next.body.text())).rejects.toThrow();
  });

  it('ends the upstream call when the reader fails or leaves the loop early', async () => {
    const answer = await call(`/big?id=throws&size=${BEYOND_SOCKET_BUFFERS}`);
    const failure = new Error('client went away');
    let calls = 0;
    await expect(
      (async () => {
        for await (const _ of answer.body) if (++calls === 3) throw failure;
      })(),
    ).rejects.toBe(failure);
    await until('throws', (s) => s.closedEarly);

    const left = await call(`/big?id=breaks&size=${BEYOND_SOCKET_BUFFERS}`);
    for await (const _ of left.body) break;
    await until('breaks', (s) => s.closedEarly);
  });

  it('a cancellation before the answer rejects the call; one during the body ends it', async () => {
    const early = new Cancellation();
    const pending = call('/late?id=late&size=10', early);
    early.cancel();
    await expect(pending).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });

    const midway = new Cancellation();
    const answer = await call(`/big?id=midway&size=${BEYOND_SOCKET_BUFFERS}`, midway);
    const reading = answer.body.text();
    midway.cancel();
    await expect(reading).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    await until('midway', (s) => s.closedEarly);
    // Destroying a body that has ended or failed changes nothing.
    answer.body.destroy();
  });
});
