import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { costOf } from '../billing/cost.js';
import type { CatalogModel, GroupPrices } from '../catalog/catalog.schemas.js';
import { DomainError, isDomainError, type ValidationIssue } from '../shared/errors.js';
import { parseInput } from '../shared/validation.js';

/**
 * POST /v1/videos body validation (SPEC.md 4.7) against one model's catalog `video` row (SPEC.md 4.8).
 * Pure: no I/O. Every problem is collected and thrown at once as one `validation_failed` error whose
 * locations are relative to the body.
 */

export type VideoMode = 'text-to-video' | 'image-to-video' | 'multi-reference';
export type ReferenceType = 'image' | 'video' | 'audio';
export type ReferenceRole = 'first_frame' | 'last_frame' | 'reference';

export interface VideoReference {
  type: ReferenceType;
  role: ReferenceRole;
  url: string;
  durationSeconds: number | null;
}

export interface VideoJobSpec {
  model: string;
  mode: VideoMode;
  prompt: string | null;
  seconds: number;
  /** Tier, e.g. `720p`. */
  resolution: string;
  /** Exact dimensions implied by tier + ratio (see `videoDimensions`). */
  width: number;
  height: number;
  ratio: string;
  /** `native` only on models whose catalog audio is `native` (the alpha models). */
  audio: 'native' | 'off';
  multiShot: boolean;
  promptExtend: boolean;
  references: VideoReference[];
}

export const MAX_PROMPT_CHARS = 4000;
/** SPEC.md 4.8: gamma_h3 audio references are 2 to 15 s long and up to 15 MB each (read as MiB). */
export const AUDIO_REFERENCE_SECONDS = { min: 2, max: 15 } as const;
const MiB = 1024 * 1024;
/**
 * The most a data: reference may carry, decoded, per type (audio: SPEC.md 4.8). A data: URL is measured
 * here; an http(s) URL is the upstream's to fetch and bound, so only its length is ours.
 */
export const REFERENCE_MAX_BYTES: Record<ReferenceType, number> = { image: 10 * MiB, video: 15 * MiB, audio: 15 * MiB };
/** The longest http(s) reference URL accepted (data: URLs are bounded by their decoded size instead). */
export const REFERENCE_URL_MAX_CHARS = 2048;

/**
 * The one table of exact dimensions: short side = the tier's number (480p -> 480), long side = short x
 * the ratio, rounded to the nearest even number (encoders want even sizes). Portrait ratios swap.
 * 720p: 16:9 1280x720, 9:16 720x1280, 1:1 720x720, 4:3 960x720, 3:4 720x960, 21:9 1680x720.
 * 480p 16:9 854x480; 768p 16:9 1366x768; 1080p 16:9 1920x1080, 21:9 2520x1080.
 * Null when the tier or ratio is not of the form `<N>p` / `<W>:<H>`.
 */
export function videoDimensions(tier: string, ratio: string): { width: number; height: number } | null {
  const t = /^(\d+)p$/.exec(tier);
  const r = /^(\d+):(\d+)$/.exec(ratio);
  if (!t || !r) return null;
  const short = Number(t[1]);
  const [a, b] = [Number(r[1]), Number(r[2])];
  if (short === 0 || a === 0 || b === 0) return null;
  const long = Math.round((short * Math.max(a, b)) / Math.min(a, b) / 2) * 2;
  return a >= b ? { width: long, height: short } : { width: short, height: long };
}

// ---- shapes (model-independent) ----

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  // A string first, so a missing field reads "Field required" and a number "a valid string".
  z.string().pipe(z.enum(values, { error: `Input should be one of: ${values.join(', ')}` }));

const urlSchema = z.string().refine(isAcceptedUrl, 'Input should be an http(s) URL or a data: URL');

const referenceSchema = z.strictObject({
  type: oneOf(['image', 'video', 'audio']),
  // Optional because `reference` is the only role a video or audio may take anyway.
  role: oneOf(['first_frame', 'last_frame', 'reference']).default('reference'),
  url: urlSchema,
  duration: z.number().positive().optional(),
});

const settingsSchema = z.strictObject({
  audio: oneOf(['native', 'off']).optional(),
  multi_shot: z.boolean().optional(),
});

/** `input_reference` is the OpenAI videos API's image to start from: {image_url}, a URL, or (multipart) a file. */
const BODY_KEYS = ['model', 'prompt', 'seconds', 'size', 'resolution', 'aspect_ratio', 'ratio', 'settings', 'references', 'prompt_extend', 'input_reference'];

const inputReferenceObject = z.strictObject({ image_url: urlSchema.optional(), file_id: z.string().optional() });

/** Collects issues; `field` parses one value and keeps going on failure, so every problem is reported. */
class Issues {
  readonly list: ValidationIssue[] = [];

  add(loc: (string | number)[], msg: string, type = 'value_error'): void {
    this.list.push({ loc, msg, type });
  }

  field<S extends z.ZodType>(loc: (string | number)[], schema: S, value: unknown): z.output<S> | undefined {
    try {
      return parseInput(schema, value);
    } catch (error) {
      if (!isDomainError(error)) throw error;
      this.list.push(...error.withLocPrefix(loc).issues);
      return undefined;
    }
  }
}

// ---- the parser ----

export function parseVideoRequest(body: unknown, model: CatalogModel): VideoJobSpec {
  const video = model.video;
  if (!video) throw new Error(`${model.id} has no video spec`);
  const obj = parseInput(z.looseObject({}), body) as Record<string, unknown>;
  const v = new Issues();
  for (const key of Object.keys(obj)) if (!BODY_KEYS.includes(key)) v.add([key], 'Extra inputs are not permitted', 'extra_forbidden');

  const prompt = v.field(['prompt'], z.string().trim().max(MAX_PROMPT_CHARS, `String should have at most ${MAX_PROMPT_CHARS} characters`).optional(), obj.prompt);
  const promptInvalid = obj.prompt !== undefined && prompt === undefined;
  const seconds = parseSeconds(v, obj.seconds, video, model.id);
  const { tier, ratio } = parseShape(v, obj, video, model.id);
  const { audio, multiShot } = parseSettings(v, obj.settings, video, model.id);
  // prompt_extend: only where the catalog offers it (the beta models)
  const promptExtend = v.field(['prompt_extend'], z.boolean().optional(), obj.prompt_extend);
  if (promptExtend !== undefined && !video.promptExtend) v.add(['prompt_extend'], `Extra inputs are not permitted: ${model.id} has no prompt extension`, 'extra_forbidden');
  // references, with the OpenAI-style input_reference as the first frame
  const references = parseReferences(v, obj.references, model, parseInputReference(v, obj.input_reference));
  const mode = videoMode(v, references, video, model.id, { given: Boolean(prompt), invalid: promptInvalid });

  if (v.list.length > 0) throw new DomainError('validation_failed', 'Request validation failed', { issues: v.list });
  const dims = videoDimensions(tier, ratio);
  // The catalog schema allows any strings; a tier/ratio outside `<N>p` / `<W>:<H>` is an operator error.
  if (!dims) throw new Error(`catalog video row of ${model.id} has an unusable resolution ${tier} or ratio ${ratio}`);
  return {
    model: model.id,
    mode,
    prompt: prompt || null,
    seconds,
    resolution: tier,
    width: dims.width,
    height: dims.height,
    ratio,
    audio,
    multiShot,
    promptExtend: promptExtend ?? false,
    references,
  };
}

type VideoSpec = NonNullable<CatalogModel['video']>;

/** seconds: an integer, or an integer string (the openai SDK sends strings), within the model's range. */
function parseSeconds(v: Issues, given: unknown, video: VideoSpec, modelId: string): number {
  const { min, max } = video.seconds;
  if (given === undefined) return video.seconds.default ?? min;
  const raw = typeof given === 'string' && /^\s*\d{1,9}\s*$/.test(given) ? Number(given) : given;
  if (typeof raw !== 'number' || !Number.isInteger(raw)) v.add(['seconds'], 'Input should be a valid integer', 'int_parsing');
  else if (raw < min || raw > max) v.add(['seconds'], min === max ? `Input should be ${min} for ${modelId}` : `Input should be between ${min} and ${max} for ${modelId}`, 'value_error');
  else return raw;
  return video.seconds.default ?? min;
}

/** size / resolution and aspect_ratio / ratio are aliases; both given must agree. */
function parseShape(v: Issues, obj: Record<string, unknown>, video: VideoSpec, modelId: string): { tier: string; ratio: string } {
  const sizeKey = aliasOf(v, obj, 'size', 'resolution');
  const ratioKey = aliasOf(v, obj, 'aspect_ratio', 'ratio');
  let ratio: string | undefined;
  if (ratioKey) {
    const value = v.field([ratioKey], z.string().trim(), obj[ratioKey]);
    if (value !== undefined && !video.ratios.includes(value)) v.add([ratioKey], `Input should be one of: ${video.ratios.join(', ')}`, 'literal_error');
    else ratio = value;
  }
  let tier = video.resolutions.find((r) => Number.parseInt(r, 10) >= 720) ?? video.resolutions[0]!;
  const value = sizeKey ? v.field([sizeKey], z.string().trim().toLowerCase(), obj[sizeKey]) : undefined;
  if (sizeKey && value !== undefined) {
    const exact = [...combos(video.resolutions, video.ratios)];
    const match = exact.find((c) => `${c.width}x${c.height}` === value);
    if (video.resolutions.includes(value)) tier = value;
    else if (!match) {
      const dims = exact.map((c) => `${c.width}x${c.height}`).join(', ');
      v.add([sizeKey], `Input should be one of: ${video.resolutions.join(', ')} or exact dimensions ${dims} for ${modelId}`, 'literal_error');
    } else if (ratioKey && ratio !== undefined && ratio !== match.ratio) {
      v.add([sizeKey], `Input ${value} is ${match.ratio}, which conflicts with ${ratioKey} ${ratio}`, 'value_error');
    } else {
      tier = match.tier;
      ratio = match.ratio;
    }
  }
  return { tier, ratio: ratio ?? video.ratios[0]! };
}

/**
 * settings: the alpha models' controls. Rule: a model takes settings only when its catalog audio is
 * `native` (SPEC 4.7 "applies to the alpha models"); elsewhere every settings field is refused.
 */
function parseSettings(v: Issues, given: unknown, video: VideoSpec, modelId: string): { audio: VideoJobSpec['audio']; multiShot: boolean } {
  const settings = v.field(['settings'], settingsSchema.optional(), given);
  const takesSettings = video.audio === 'native';
  if (settings && !takesSettings) {
    for (const key of Object.keys(settings)) v.add(['settings', key], `Extra inputs are not permitted: ${modelId} takes no settings (audio ${video.audio})`, 'extra_forbidden');
  }
  return { audio: takesSettings ? (settings?.audio ?? 'off') : 'off', multiShot: takesSettings ? (settings?.multi_shot ?? false) : false };
}

/** The mode follows from the references; it must be one the model offers, and text-to-video needs a prompt. */
function videoMode(v: Issues, references: VideoJobSpec['references'], video: VideoSpec, modelId: string, prompt: { given: boolean; invalid: boolean }): VideoMode {
  const images = references.filter((r) => r.type === 'image');
  const mode: VideoMode = images.some((r) => r.role === 'first_frame')
    ? 'image-to-video'
    : images.some((r) => r.role === 'reference') && video.modes.includes('multi-reference')
      ? 'multi-reference'
      : 'text-to-video';
  const referenceIssues = v.list.some((i) => i.loc[0] === 'references' || i.loc[0] === 'input_reference');
  // A refused reference already explains an impossible mode; don't report it twice.
  if (!video.modes.includes(mode) && !referenceIssues) {
    const msg = mode === 'text-to-video' ? `Input should include a first_frame image for ${modelId} (modes: ${video.modes.join(', ')})` : `Input should fit one of ${modelId}'s modes: ${video.modes.join(', ')}`;
    v.add(['references'], msg, 'value_error');
  } else if (video.modes.includes(mode) && mode === 'text-to-video' && !prompt.given && !prompt.invalid) {
    // image-to-video and multi-reference may animate the references without words; text-to-video cannot.
    v.add(['prompt'], 'Field required for text-to-video', 'missing');
  }
  return mode;
}

/** What the job costs: per second x seconds, or one generation. */
export function videoCost(spec: VideoJobSpec, prices: GroupPrices): Decimal {
  return costOf(prices, { seconds: spec.seconds, generations: 1 });
}

// ---- helpers ----

/** Which of two alias keys carries the value; both with different values is an issue at the second. */
function aliasOf(v: Issues, obj: Record<string, unknown>, first: string, second: string): string | undefined {
  const a = obj[first];
  const b = obj[second];
  if (a !== undefined && b !== undefined && normalize(a) !== normalize(b)) {
    v.add([second], `Input should equal ${first} (${String(a)}) when both are given`, 'value_error');
  }
  return a !== undefined ? first : b !== undefined ? second : undefined;
}

function normalize(value: unknown): unknown {
  return typeof value === 'string' ? value.trim().toLowerCase() : value;
}

function* combos(tiers: string[], ratios: string[]) {
  for (const tier of tiers) {
    for (const ratio of ratios) {
      const dims = videoDimensions(tier, ratio);
      if (dims) yield { tier, ratio, ...dims };
    }
  }
}

/**
 * OpenAI's `input_reference` (a URL, `{image_url}`, or a multipart file the transport made a data: URL)
 * is a first-frame image reference. `{file_id}` needs a files API this gateway does not offer.
 */
function parseInputReference(v: Issues, value: unknown): VideoReference | undefined {
  if (value === undefined) return undefined;
  let url: string | undefined;
  if (typeof value === 'string') url = v.field(['input_reference'], urlSchema, value);
  else {
    const ref = v.field(['input_reference'], inputReferenceObject, value);
    if (ref?.file_id !== undefined) v.add(['input_reference', 'file_id'], 'File ids are not supported: upload the image as the input_reference file or send image_url', 'value_error');
    else if (ref && ref.image_url === undefined) v.add(['input_reference', 'image_url'], 'Field required', 'missing');
    else url = ref?.image_url;
  }
  if (url === undefined) return undefined;
  const bytes = dataUrlBytes(url);
  if (bytes !== null && bytes > REFERENCE_MAX_BYTES.image) v.add(['input_reference'], `Input should be at most ${REFERENCE_MAX_BYTES.image / MiB} MB of image`, 'value_error');
  else if (bytes === null && url.length > REFERENCE_URL_MAX_CHARS) v.add(['input_reference'], `URL should have at most ${REFERENCE_URL_MAX_CHARS} characters`, 'string_too_long');
  else return { type: 'image', role: 'first_frame', url, durationSeconds: null };
  return undefined;
}

function parseReferences(v: Issues, value: unknown, model: CatalogModel, inputReference?: VideoReference): VideoReference[] {
  const video = model.video!;
  const items = v.field(['references'], z.array(z.unknown()).optional(), value) ?? [];
  const limits: Record<ReferenceType, number> = {
    image: video.references.images,
    video: video.references.videos,
    // Audio references exist only where the catalog says the model takes audio by reference (gamma_h3).
    audio: video.audio === 'reference' ? video.references.audio : 0,
  };
  const allowedTypes = (Object.keys(limits) as ReferenceType[]).filter((t) => limits[t] > 0);
  const out: VideoReference[] = [];
  if (inputReference) {
    if (limits.image === 0) v.add(['input_reference'], `Input should be omitted: ${model.id} accepts no image references`, 'extra_forbidden');
    else if (!video.references.roles.includes('first_frame')) v.add(['input_reference'], `Input should be omitted: ${model.id} takes no first_frame image`, 'extra_forbidden');
    else out.push(inputReference);
  }
  items.forEach((item, index) => {
    const loc = ['references', index];
    const ref = v.field(loc, referenceSchema, item);
    if (!ref) return;
    if (limits[ref.type] === 0) {
      v.add([...loc, 'type'], allowedTypes.length === 0 ? `Input should be omitted: ${model.id} accepts no references` : `Input should be one of: ${allowedTypes.join(', ')} for ${model.id}`, 'literal_error');
      return;
    }
    if (ref.type === 'image') {
      if (!video.references.roles.includes(ref.role)) v.add([...loc, 'role'], `Input should be one of: ${video.references.roles.join(', ')} for ${model.id}`, 'literal_error');
      if (ref.duration !== undefined) v.add([...loc, 'duration'], 'Extra inputs are not permitted: duration applies to audio and video references', 'extra_forbidden');
    } else if (ref.role !== 'reference') {
      v.add([...loc, 'role'], `Input should be reference for ${ref.type} references`, 'literal_error');
    }
    if (ref.type === 'audio') {
      const { min, max } = AUDIO_REFERENCE_SECONDS;
      if (ref.duration === undefined) v.add([...loc, 'duration'], `Field required: audio references need their duration (${min} to ${max} seconds)`, 'missing');
      else if (ref.duration < min || ref.duration > max) v.add([...loc, 'duration'], `Input should be between ${min} and ${max} seconds`, 'value_error');
    }
    const bytes = dataUrlBytes(ref.url);
    if (bytes !== null && bytes > REFERENCE_MAX_BYTES[ref.type]) v.add([...loc, 'url'], `Input should be at most ${REFERENCE_MAX_BYTES[ref.type] / MiB} MB of ${ref.type}`, 'value_error');
    else if (bytes === null && ref.url.length > REFERENCE_URL_MAX_CHARS) v.add([...loc, 'url'], `URL should have at most ${REFERENCE_URL_MAX_CHARS} characters`, 'string_too_long');
    out.push({ type: ref.type, role: ref.role, url: ref.url, durationSeconds: ref.duration ?? null });
  });

  for (const type of allowedTypes) {
    const count = out.filter((r) => r.type === type).length;
    if (count > limits[type]) v.add(['references'], `Input should have at most ${limits[type]} ${type} references for ${model.id}`, 'too_long');
  }
  const firstFrames = out.filter((r) => r.role === 'first_frame').length;
  const lastFrames = out.filter((r) => r.role === 'last_frame').length;
  if (firstFrames > 1) {
    if (out[0] === inputReference) v.add(['input_reference'], 'Input should be omitted when references already holds a first_frame', 'value_error');
    else v.add(['references'], 'Input should have at most one first_frame reference', 'too_long');
  }
  if (lastFrames > 1) v.add(['references'], 'Input should have at most one last_frame reference', 'too_long');
  if (lastFrames > 0 && firstFrames === 0) v.add(['references'], 'Input should include a first_frame image when a last_frame is given', 'value_error');
  return out;
}

function isAcceptedUrl(url: string): boolean {
  if (/^data:/i.test(url)) return url.includes(',');
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Decoded size of a data: URL's payload, or null for any other URL. Measured without copying the payload
 * (it may be megabytes): base64 counts its characters less the padding (whitespace, which data: URLs do
 * not carry in practice, only ever overstates it); percent-encoding counts each %XX as one byte.
 */
export function dataUrlBytes(url: string): number | null {
  if (!/^data:/i.test(url)) return null;
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const payloadChars = url.length - comma - 1;
  if (/;base64$/i.test(url.slice(0, comma))) {
    let end = url.length;
    while (end > comma + 1 && url.charCodeAt(end - 1) === 61 /* = */) end--;
    return Math.floor(((end - comma - 1) * 3) / 4);
  }
  let escapes = 0;
  for (let i = url.indexOf('%', comma); i >= 0; i = url.indexOf('%', i + 1)) escapes++;
  return payloadChars - 2 * escapes;
}
