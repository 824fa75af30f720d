import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** One stored file, as found by `get`: its size and type, and a way to read all of it or one byte range. */
export interface StoredObject {
  size: number;
  contentType: string;
  /** A fresh stream over the bytes; `range` is inclusive at both ends, like HTTP's. */
  open(range?: { start: number; end: number }): Readable;
}

/** Where finished video files live. Keys are our own task ids. */
export interface VideoStorage {
  /** Stores a stream under `key` atomically (write to a temp file, fsync, rename), verifying `expectedBytes` when given; returns the size. */
  put(key: string, body: AsyncIterable<Uint8Array> | NodeJS.ReadableStream, contentType: string, expectedBytes?: number | null): Promise<{ size: number }>;
  /** The stored object, or null when there is none under `key`. */
  get(key: string): Promise<StoredObject | null>;
  /** Removes the object; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
}

/** Keys name files directly, so nothing that could climb out of the directory (or hide as a dotfile) is accepted. */
const KEY_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** What `get` reports when the content-type sidecar is missing or unreadable: the videos we store are MP4s. */
export const DEFAULT_VIDEO_CONTENT_TYPE = 'video/mp4';

export function assertVideoKey(key: string): void {
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw new Error(`invalid video storage key ${JSON.stringify(key)}`);
}

/** The default location: `DATA_DIR/videos`. */
export function defaultVideoDir(dataDir: string): string {
  return path.join(dataDir, 'videos');
}

/**
 * Videos as plain files in one directory: `<key>` holds the bytes, `<key>.json` a sidecar with the
 * content type. Temp files are `.<key>.<uuid>.tmp`; keys cannot contain dots, so a temp file is never
 * mistaken for an object.
 *
 * Atomicity: the bytes go to a temp file that is fsynced and verified; only then is the sidecar
 * renamed into place and, last, the bytes (the commit point). A reader sees no object or a complete
 * one, never a partial upload; a failed upload leaves at most an orphan sidecar, which `get` never
 * reports without its bytes. Objects are write-once in practice (one per task), so `open` reads by path.
 */
export class LocalVideoStorage implements VideoStorage {
  constructor(private readonly dir: string) {}

  async put(key: string, body: AsyncIterable<Uint8Array> | NodeJS.ReadableStream, contentType: string, expectedBytes?: number | null): Promise<{ size: number }> {
    assertVideoKey(key);
    await mkdir(this.dir, { recursive: true });
    const data = await this.writeTemp(key, async (handle) => {
      let written = 0;
      for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        written += bytes.byteLength;
        // Stop as soon as the body is longer than promised, rather than filling the disk first.
        if (expectedBytes != null && written > expectedBytes) throw new Error(`video ${key}: body is longer than the expected ${expectedBytes} bytes`);
        // write() may be short (e.g. near a full disk); loop until the chunk is all down.
        for (let offset = 0; offset < bytes.byteLength; ) offset += (await handle.write(bytes, offset)).bytesWritten;
      }
      if (expectedBytes != null && written !== expectedBytes) throw new Error(`video ${key}: got ${written} bytes, expected ${expectedBytes}`);
      return written;
    });
    let metaTemp: string | null = null;
    try {
      metaTemp = (await this.writeTemp(`${key}.json`, (handle) => handle.writeFile(JSON.stringify({ contentType })))).temp;
      await rename(metaTemp, path.join(this.dir, `${key}.json`));
      metaTemp = null;
      // The commit point: until this rename there is no object under `key`.
      await rename(data.temp, path.join(this.dir, key));
    } catch (error) {
      await unlink(data.temp).catch(() => undefined);
      if (metaTemp) await unlink(metaTemp).catch(() => undefined);
      throw error;
    }
    await syncDir(this.dir);
    return { size: data.result };
  }

  async get(key: string): Promise<StoredObject | null> {
    assertVideoKey(key);
    const file = path.join(this.dir, key);
    let size: number;
    try {
      const info = await stat(file);
      if (!info.isFile()) return null;
      size = info.size;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    const contentType = await this.readContentType(key);
    return {
      size,
      contentType,
      open: (range) => createReadStream(file, range ? { start: range.start, end: range.end } : {}),
    };
  }

  async delete(key: string): Promise<void> {
    assertVideoKey(key);
    // The bytes first: once they are gone the object is gone, whatever happens to the sidecar.
    await rm(path.join(this.dir, key), { force: true });
    await rm(path.join(this.dir, `${key}.json`), { force: true });
  }

  private async readContentType(key: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(path.join(this.dir, `${key}.json`), 'utf8')) as { contentType?: unknown };
      if (typeof meta.contentType === 'string' && meta.contentType) return meta.contentType;
    } catch {
      // Missing or damaged sidecar: the bytes are still good, serve them with the default type.
    }
    return DEFAULT_VIDEO_CONTENT_TYPE;
  }

  /** Runs `fill` on a fresh temp file and fsyncs it; on any failure the temp file is removed. The caller renames it. */
  private async writeTemp<T>(name: string, fill: (handle: FileHandle) => Promise<T>): Promise<{ temp: string; result: T }> {
    const temp = path.join(this.dir, `.${name}.${randomUUID()}.tmp`);
    const handle = await open(temp, 'wx');
    let closed = false;
    try {
      const result = await fill(handle);
      await handle.sync();
      closed = true;
      await handle.close();
      return { temp, result };
    } catch (error) {
      if (!closed) await handle.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }
}

/** Makes the renames themselves durable. Some platforms cannot open or fsync a directory; there it is best effort. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not fatal: the data file itself was fsynced before the rename.
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'ENOENT';
}
