import type { IncomingMessage } from 'node:http';
import { DomainError, type ValidationIssue } from '../../src/shared/errors.js';
import { headerOf } from './auth.js';
import { readJsonBody, V1_BODY_LIMIT_BYTES } from './inference-endpoints.js';

/** A file field of a multipart body, read whole (the body limit bounds it). */
export interface FormFile {
  filename: string;
  /** The part's content type, or '' when the client sent none. */
  type: string;
  bytes: Buffer;
}

/** A form's fields as nested JSON-like values: text as strings, files as FormFile. */
export type FormValue = string | FormFile | FormValue[] | { [key: string]: FormValue };

export function isFormFile(value: unknown): value is FormFile {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as FormFile).bytes);
}

const mediaTypeOf = (req: IncomingMessage) => headerOf(req, 'content-type')?.split(';', 1)[0]!.trim().toLowerCase();

/** Whether the request carries a body at all (a bodiless POST has neither a length nor chunked framing). */
function hasBody(req: IncomingMessage): boolean {
  return Number(headerOf(req, 'content-length') ?? 0) > 0 || headerOf(req, 'transfer-encoding') !== undefined;
}

/**
 * A body that is JSON or `multipart/form-data` (the official OpenAI client sends the latter for
 * uploads): JSON as readJsonBody reads it, a form as nested fields (`readForm`). Any other content type
 * is a 415 that names the two accepted ones; a bodiless request reads as no body. Problem locations
 * start with `body`, as readJsonBody's do.
 */
export async function readJsonOrForm(req: IncomingMessage): Promise<{ kind: 'json'; body: unknown } | { kind: 'form'; body: Record<string, FormValue> }> {
  const type = mediaTypeOf(req);
  if (type === 'application/json') return { kind: 'json', body: await readJsonBody(req) };
  if (type === 'multipart/form-data') {
    try {
      return { kind: 'form', body: await readForm(req) };
    } catch (error) {
      // As readJsonBody's, the form's problems are located under `body`.
      throw error instanceof DomainError ? error.withLocPrefix(['body']) : error;
    }
  }
  if (type === undefined && !hasBody(req)) return { kind: 'json', body: undefined };
  throw new DomainError('unsupported_media_type', `Unsupported content type ${JSON.stringify(type ?? 'none')}: send the body as application/json or multipart/form-data`, { reason: 'unsupported_media_type' });
}

/** Reads the raw body up to the /v1 body limit (413 beyond it). Uploads are not sent compressed; an encoded body is a 400. */
async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const tooLarge = () => new DomainError('payload_too_large', `Request body is larger than ${V1_BODY_LIMIT_BYTES / 1024 / 1024} MiB`, { reason: 'payload_too_large' });
  if (Number(headerOf(req, 'content-length') ?? 0) > V1_BODY_LIMIT_BYTES) throw tooLarge();
  const encoding = headerOf(req, 'content-encoding')?.trim().toLowerCase() ?? 'identity';
  if (encoding !== 'identity') throw new DomainError('bad_request', `Unsupported content encoding ${JSON.stringify(encoding)} for a multipart body`, { reason: 'unsupported_content_encoding' });
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: DomainError) => {
      req.removeAllListeners('data');
      // The rest is left unread: node discards it, and the client still reads our answer.
      req.resume();
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > V1_BODY_LIMIT_BYTES) return fail(tooLarge());
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks, size)));
    req.on('error', () => fail(new DomainError('bad_request', 'The request body could not be read', { reason: 'unreadable_body' })));
    req.on('aborted', () => fail(new DomainError('bad_request', 'The request body could not be read', { reason: 'unreadable_body' })));
  });
}

const invalid = (loc: (string | number)[], msg: string, type = 'value_error'): DomainError =>
  new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc, msg, type }] });

/**
 * A `multipart/form-data` body as nested fields, parsed by the platform (fetch's `Response.formData`).
 * Field names use the bracket notation the OpenAI client writes for nested values: `settings[audio]`
 * is `{settings: {audio}}`, `references[][type]` appends to (or fills the last element of) an array of
 * objects, `tags[]` appends to an array, and `references[0][url]` indexes one. Text stays text; the
 * caller converts what its schema wants as numbers or booleans. Locations of problems are relative to
 * the body (readJsonOrForm adds `body`).
 */
export async function readForm(req: IncomingMessage): Promise<Record<string, FormValue>> {
  const bytes = await readBytes(req);
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { 'content-type': headerOf(req, 'content-type')! } }).formData();
  } catch {
    throw invalid([], 'Multipart decode error: the body is not valid multipart/form-data for its boundary', 'multipart_invalid');
  }
  const root: Record<string, FormValue> = {};
  const issues: ValidationIssue[] = [];
  for (const [name, entry] of form.entries()) {
    const path = fieldPath(name);
    if (!path) {
      issues.push({ loc: [name], msg: 'Field name is not valid form notation', type: 'value_error' });
      continue;
    }
    const value: FormValue = typeof entry === 'string' ? entry : { filename: entry.name, type: entry.type, bytes: Buffer.from(await entry.arrayBuffer()) };
    const problem = place(root, path, value);
    if (problem) issues.push({ loc: problem, msg: 'Field given more than once, or both as a value and as an object', type: 'value_error' });
  }
  if (issues.length) throw new DomainError('validation_failed', 'Request validation failed', { issues });
  return root;
}

/** Keys that must never become object properties (prototype pollution). */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** `a[b][]` -> ['a', 'b', '']: '' appends to an array, a number indexes one. Null for malformed names. */
function fieldPath(name: string): (string | number)[] | null {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
  if (!match) return null;
  const segments: (string | number)[] = [match[1]!];
  for (const [, inner] of match[2]!.matchAll(/\[([^[\]]*)\]/g)) segments.push(/^\d{1,4}$/.test(inner!) ? Number(inner) : inner!);
  return segments.some((s) => typeof s === 'string' && FORBIDDEN_KEYS.has(s)) ? null : segments;
}

/**
 * Puts one value at its path; returns the location of a conflict (a field set twice), else null.
 * An append segment ('') followed by a key fills the array's last object while that object lacks the
 * key, and starts a new object otherwise: `r[][type]=a, r[][url]=x, r[][type]=b` is two objects.
 */
function place(root: Record<string, FormValue>, path: (string | number)[], value: FormValue): (string | number)[] | null {
  let container: Record<string, FormValue> | FormValue[] = root;
  const loc: (string | number)[] = [];
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    const last = i === path.length - 1;
    const next = path[i + 1];
    let key: string | number = segment;
    if (Array.isArray(container)) {
      if (segment === '') {
        const tail = container.at(-1);
        const reusable = !last && typeof next === 'string' && next !== '' && isPlainObject(tail) && !(next in tail);
        key = reusable ? container.length - 1 : container.length;
      } else if (typeof segment !== 'number') return [...loc, segment];
    } else if (typeof segment !== 'string' || segment === '') return [...loc, segment];
    loc.push(key);
    const holder = container as Record<string | number, FormValue>;
    if (last) {
      if (holder[key] !== undefined) return loc;
      holder[key] = value;
      return null;
    }
    const wantArray = next === '' || typeof next === 'number';
    holder[key] ??= wantArray ? [] : {};
    const child = holder[key]!;
    if (wantArray ? !Array.isArray(child) : !isPlainObject(child)) return loc;
    container = child as Record<string, FormValue> | FormValue[];
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, FormValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isFormFile(value);
}

/** Image types by file extension, for uploads sent without a specific part content type. */
const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif' };

/**
 * A POST /v1/videos form as the JSON body the video parser validates (src/video/video-request.ts),
 * so both content types meet the same rules at the same locations. Text that the JSON schema wants
 * as a boolean (`prompt_extend`, `settings[multi_shot]`) or a number (`references[][duration]`) is
 * converted when it reads as one, and left as text (to be refused with its location) when it does
 * not; `seconds` the parser reads from text itself. The `input_reference` file becomes a `data:` URL
 * (the parser makes it the first-frame image); a file in any other field is refused.
 */
export function videoBodyFromForm(form: Record<string, FormValue>): Record<string, unknown> {
  const issues: ValidationIssue[] = [];
  const convert = (value: FormValue, loc: (string | number)[]): unknown => {
    if (isFormFile(value)) {
      if (loc.length === 1 && loc[0] === 'input_reference') {
        const extension = /\.([a-z0-9]+)$/i.exec(value.filename)?.[1]?.toLowerCase() ?? '';
        // A part without a type, or with the generic one clients default to, is typed by its file name.
        const given = value.type.split(';', 1)[0]!.trim().toLowerCase();
        const type = given && given !== 'application/octet-stream' ? given : (IMAGE_TYPES[extension] ?? given);
        if (!type.startsWith('image/')) {
          issues.push({ loc, msg: `Input should be an image file (${[...new Set(Object.values(IMAGE_TYPES))].join(', ')})`, type: 'value_error' });
          return undefined;
        }
        return `data:${type};base64,${value.bytes.toString('base64')}`;
      }
      issues.push({ loc, msg: 'Input should be a text field, not a file (only input_reference takes a file)', type: 'value_error' });
      return undefined;
    }
    if (Array.isArray(value)) return value.map((item, index) => convert(item, [...loc, index]));
    if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, convert(item, [...loc, key])]));
    const field = loc.filter((segment) => typeof segment === 'string').join('.');
    if ((field === 'prompt_extend' || field === 'settings.multi_shot') && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
    if (field === 'references.duration' && /^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
    return value;
  };
  const body = convert(form, []) as Record<string, unknown>;
  if (issues.length) throw new DomainError('validation_failed', 'Request validation failed', { issues });
  return body;
}
