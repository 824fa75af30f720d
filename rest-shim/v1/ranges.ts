import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import type { StoredObject } from '../../src/storage/video-storage.js';

/** One inclusive byte range, as in `Content-Range: bytes start-end/size`. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * More ranges than this in one Range header and the header is ignored (a 200 with the whole body),
 * which RFC 9110 section 14.2 allows; it keeps a request from fanning out into hundreds of tiny parts.
 */
export const MAX_RANGES = 16;

/**
 * RFC 9110 section 14.1.2 byte ranges, resolved against `size`:
 * - null: ignore the header (not `bytes`, bad syntax, `last < first`, too many ranges), i.e. send 200;
 * - 'unsatisfiable': no range starts before `size` (this includes `bytes=-0`), i.e. send 416;
 * - otherwise the satisfiable ranges, ends clamped to `size - 1`, with overlapping or adjacent ranges
 *   coalesced; the rest keep the order they were asked in (14.2: parts SHOULD follow the request).
 *
 * Not express's `range-parser` (1.3.0, in the tree): it answers a suffix longer than the file
 * (`bytes=-200` of 100 bytes) with "unsatisfiable", where 14.1.3 says the whole file; it makes
 * `bytes=5-2` a 416 instead of ignoring the header; it refuses empty list elements (5.6.1) and has
 * no cap on the number of ranges. Each of those is pinned in test/unit/ranges.test.ts.
 */
export function parseRange(header: string, size: number): ByteRange[] | 'unsatisfiable' | null {
  const match = /^\s*bytes=(.*)$/is.exec(header); // range units compare case-insensitively (14.1)
  if (!match) return null;
  // A list may carry empty elements ("a, , b"); recipients must accept them (5.6.1).
  const specs = match[1]!.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (specs.length === 0 || specs.length > MAX_RANGES) return null;

  const ranges: ByteRange[] = [];
  let suffixOnEmpty = false;
  for (const spec of specs) {
    const m = /^(\d*)-(\d*)$/.exec(spec);
    if (!m || (m[1] === '' && m[2] === '')) return null;
    if (m[1] === '') {
      // Suffix: the last n bytes, the whole file when n is larger.
      const length = Number(m[2]);
      if (length === 0) continue;
      if (size === 0) suffixOnEmpty = true;
      else ranges.push({ start: Math.max(0, size - length), end: size - 1 });
      continue;
    }
    const start = Number(m[1]);
    const last = m[2] === '' ? Infinity : Number(m[2]);
    if (last < start) return null; // invalid, so the whole header is (14.1.1)
    if (start < size) ranges.push({ start, end: Math.min(last, size - 1) });
  }
  // `bytes=-5` on an empty file is satisfiable by the RFC's definition but has no bytes to send,
  // and `Content-Range` cannot say "nothing": answer with the (empty) whole instead.
  if (ranges.length === 0) return suffixOnEmpty ? null : 'unsatisfiable';
  return coalesce(ranges);
}

/** Merges overlapping or adjacent ranges; each merged range takes the place of its earliest member. */
function coalesce(ranges: ByteRange[]): ByteRange[] {
  const order = ranges.map((range, index) => ({ ...range, index })).sort((a, b) => a.start - b.start);
  const merged: (ByteRange & { index: number })[] = [];
  for (const range of order) {
    const previous = merged.at(-1);
    if (previous && range.start <= previous.end + 1) {
      previous.end = Math.max(previous.end, range.end);
      previous.index = Math.min(previous.index, range.index);
    } else {
      merged.push({ ...range });
    }
  }
  return merged.sort((a, b) => a.index - b.index).map(({ start, end }) => ({ start, end }));
}

export interface SendOptions {
  /** A full entity-tag (`"abc"` or `W/"abc"`); a bare value is quoted. */
  etag?: string;
  lastModified?: Date;
  /** Offered as `Content-Disposition: inline; filename=...`. */
  filename?: string;
}

/**
 * Sends `object` for GET or HEAD, honouring Range and If-Range (RFC 9110 sections 13.1.5, 14, 15.3.7,
 * 15.5.17). HEAD gets exactly the status and headers GET would, and no body. The bytes are streamed,
 * never buffered whole; if the client goes away the read stops and the promise resolves. Any other
 * failure while streaming rejects after the connection has been torn down (a truncated body is never
 * passed off as complete).
 */
export async function sendStoredObject(req: Request, res: Response, object: StoredObject, options: SendOptions = {}): Promise<void> {
  const { size, contentType } = object;
  const etag = options.etag === undefined ? undefined : normalizeEtag(options.etag);
  res.setHeader('Accept-Ranges', 'bytes');
  if (etag) res.setHeader('ETag', etag);
  if (options.lastModified) res.setHeader('Last-Modified', options.lastModified.toUTCString());
  if (options.filename !== undefined) res.setHeader('Content-Disposition', contentDisposition(options.filename));

  const header = req.get('range');
  // Range is defined for GET only (14.2); HEAD mirrors GET. If-Range decides whether to look at it at all.
  const wantsRange = header !== undefined && (req.method === 'GET' || req.method === 'HEAD') && ifRangeMatches(req.get('if-range'), etag, options.lastModified);
  const ranges = wantsRange ? parseRange(header, size) : null;
  const head = req.method === 'HEAD';

  if (ranges === 'unsatisfiable') {
    res.status(416).setHeader('Content-Range', `bytes */${size}`);
    res.setHeader('Content-Length', 0);
    res.end();
    return;
  }

  if (ranges === null || ranges.length === 1) {
    const range = ranges?.[0];
    res.status(range ? 206 : 200);
    res.setHeader('Content-Type', contentType);
    res.setHeader('Content-Length', range ? range.end - range.start + 1 : size);
    if (range) res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    if (head || size === 0) {
      res.end();
      return;
    }
    await stream(res, () => object.open(range));
    return;
  }

  // Several ranges: multipart/byteranges (RFC 9110 section 14.6). The length is known up front
  // from the part headers and the slice sizes, so no chunked encoding is needed.
  const boundary = randomBytes(16).toString('hex');
  const partHeads = ranges.map((r, i) =>
    Buffer.from(`${i === 0 ? '' : '\r\n'}--${boundary}\r\nContent-Type: ${contentType}\r\nContent-Range: bytes ${r.start}-${r.end}/${size}\r\n\r\n`),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = partHeads.reduce((sum, h, i) => sum + h.length + ranges[i]!.end - ranges[i]!.start + 1, tail.length);
  res.status(206);
  res.setHeader('Content-Type', `multipart/byteranges; boundary=${boundary}`);
  res.setHeader('Content-Length', length);
  if (head) {
    res.end();
    return;
  }
  await stream(res, async function* () {
    for (const [i, range] of ranges.entries()) {
      yield partHeads[i]!;
      // Leaving this loop early (client gone) destroys the file stream, so reading stops.
      yield* object.open(range);
    }
    yield tail;
  });
}

/** Errors that mean the client closed the connection, not that reading the object failed. */
const DISCONNECTED = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_DESTROYED']);

/** Pipes a source into the response; pipeline destroys both ends on any error, which stops the read. */
async function stream(res: Response, source: () => NodeJS.ReadableStream | AsyncIterable<Uint8Array>): Promise<void> {
  try {
    await pipeline(source(), res);
  } catch (error) {
    if (DISCONNECTED.has((error as NodeJS.ErrnoException)?.code ?? '')) return;
    throw error;
  }
}

/**
 * RFC 9110 section 13.1.5: an entity-tag must match strongly (weak tags never do); a date must equal
 * Last-Modified exactly, and only counts when Last-Modified is strong, i.e. at least a second old.
 * A missing If-Range lets the Range through.
 */
function ifRangeMatches(ifRange: string | undefined, etag: string | undefined, lastModified: Date | undefined): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/"')) {
    return etag !== undefined && !etag.startsWith('W/') && value === etag;
  }
  if (!lastModified) return false;
  const date = Date.parse(value);
  const modifiedSeconds = Math.floor(lastModified.getTime() / 1000);
  return !Number.isNaN(date) && date / 1000 === modifiedSeconds && Date.now() - lastModified.getTime() >= 1000;
}

function normalizeEtag(etag: string): string {
  return etag.startsWith('"') || etag.startsWith('W/"') ? etag : `"${etag}"`;
}

/** RFC 6266: a quoted ASCII fallback, plus `filename*` in UTF-8 when the name is not plain ASCII. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&');
  const plain = /^[\x20-\x7e]*$/.test(filename);
  return `inline; filename="${ascii}"` + (plain ? '' : `; filename*=UTF-8''${encodeRFC5987(filename)}`);
}

function encodeRFC5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
