import { describe, expect, it } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { Catalog } from '../../src/catalog/catalog.js';
import { catalogFile, type CatalogModel } from '../../src/catalog/catalog.schemas.js';
import { DomainError, type ValidationIssue } from '../../src/shared/errors.js';
import { parseVideoRequest, videoCost, videoDimensions, type VideoJobSpec } from '../../src/video/video-request.js';

const catalog = new Catalog(catalogFile.parse(defaultCatalog), 1);
const modelOf = (id: string): CatalogModel => catalog.models.get(id)!;

const IMG = 'https://example.com/a.png';
const img = (role: string, url = IMG) => ({ type: 'image', role, url });
const audioRef = (duration: number, url = 'https://example.com/a.mp3') => ({ type: 'audio', role: 'reference', url, duration });

function parse(model: string, body: Record<string, unknown>): VideoJobSpec {
  return parseVideoRequest({ model, ...body }, modelOf(model));
}

function issuesOf(model: string, body: Record<string, unknown>): ValidationIssue[] {
  try {
    parse(model, body);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    return (error as DomainError).issues;
  }
  throw new Error('expected a validation error');
}

/** The locations of the issues, for compact assertions. */
const locsOf = (model: string, body: Record<string, unknown>) => issuesOf(model, body).map((i) => i.loc);

/** SPEC.md 4.8, one row per model, plus what this module defaults to and a minimal valid body. */
const ROWS = [
  { id: 'alpha-3.0', seconds: [3, 15], def: 3, res: ['720p', '1080p'], defRes: '720p', ratios: ['16:9', '9:16'], cost: '0.42', minimal: { prompt: 'a cat' } },
  { id: 'alpha-3.0-omni', seconds: [3, 15], def: 3, res: ['720p', '1080p'], defRes: '720p', ratios: ['16:9', '9:16'], cost: '0.435', minimal: { prompt: 'a cat' } },
  { id: 'beta3.0-t2v', seconds: [2, 30], def: 2, res: ['480p', '720p', '1080p'], defRes: '720p', ratios: ['16:9', '9:16'], cost: '0.076', minimal: { prompt: 'a cat' } },
  { id: 'beta3.0-i2v', seconds: [2, 30], def: 2, res: ['480p', '720p', '1080p'], defRes: '720p', ratios: ['16:9', '9:16'], cost: '0.076', minimal: { references: [img('first_frame')] } },
  { id: 'beta3.0-prime-t2v', seconds: [2, 30], def: 2, res: ['480p', '720p', '1080p'], defRes: '720p', ratios: ['16:9', '9:16'], cost: '0.088', minimal: { prompt: 'a cat' } },
  { id: 'beta3.0-prime-i2v', seconds: [2, 30], def: 2, res: ['480p', '720p', '1080p'], defRes: '720p', ratios: ['16:9', '9:16'], cost: '0.088', minimal: { references: [img('first_frame')] } },
  { id: 'gamma_h3', seconds: [4, 15], def: 5, res: ['480p', '768p', '1080p'], defRes: '768p', ratios: ['16:9', '9:16', '1:1', '3:4', '4:3', '21:9'], cost: '0.12', minimal: { prompt: 'a cat' } },
  { id: 'delta-imagine-video-1.5', seconds: [6, 15], def: 6, res: ['480p', '720p'], defRes: '720p', ratios: ['16:9', '9:16', '1:1'], cost: '0.18', minimal: { prompt: 'a cat' } },
  { id: 'epsilon2.5-01-720', seconds: [30, 30], def: 30, res: ['720p'], defRes: '720p', ratios: ['16:9', '9:16', '1:1', '3:4', '4:3', '21:9'], cost: '0.48', minimal: { prompt: 'a cat' } },
] as const;

const ALL_RATIOS = ['16:9', '9:16', '1:1', '3:4', '4:3', '21:9'];
const ALL_TIERS = ['480p', '720p', '768p', '1080p'];

describe('the dimension table', () => {
  it.each([
    ['720p', '16:9', 1280, 720],
    ['720p', '9:16', 720, 1280],
    ['720p', '1:1', 720, 720],
    ['720p', '4:3', 960, 720],
    ['720p', '3:4', 720, 960],
    ['720p', '21:9', 1680, 720],
    ['1080p', '16:9', 1920, 1080],
    ['1080p', '9:16', 1080, 1920],
    ['1080p', '21:9', 2520, 1080],
    ['480p', '16:9', 854, 480],
    ['480p', '4:3', 640, 480],
    ['768p', '16:9', 1366, 768],
    ['768p', '1:1', 768, 768],
  ])('%s %s -> %ix%i', (tier, ratio, width, height) => {
    expect(videoDimensions(tier, ratio)).toEqual({ width, height });
  });

  it('always even, short side = tier', () => {
    for (const tier of ALL_TIERS) {
      for (const ratio of ALL_RATIOS) {
        const { width, height } = videoDimensions(tier, ratio)!;
        expect(width % 2 + height % 2).toBe(0);
        expect(Math.min(width, height)).toBe(Number.parseInt(tier, 10));
      }
    }
  });
});

describe.each(ROWS)('$id (SPEC.md 4.8)', (row) => {
  const model = modelOf(row.id);
  const [min, max] = row.seconds;

  it('a minimal request takes the defaults', () => {
    const spec = parse(row.id, row.minimal);
    const dims = videoDimensions(row.defRes, row.ratios[0])!;
    expect(spec).toMatchObject({
      model: row.id,
      seconds: row.def,
      resolution: row.defRes,
      ratio: row.ratios[0],
      width: dims.width,
      height: dims.height,
      audio: 'off',
      multiShot: false,
      promptExtend: false,
    });
  });

  it('costs its price at the defaults', () => {
    const prices = catalog.priceOf(row.id, 'cheap', catalog.defaultPlan)!;
    expect(videoCost(parse(row.id, row.minimal), prices).toFixed()).toBe(row.cost);
  });

  it(`accepts ${min} and ${max} seconds, also as strings`, () => {
    expect(parse(row.id, { ...row.minimal, seconds: min }).seconds).toBe(min);
    expect(parse(row.id, { ...row.minimal, seconds: max }).seconds).toBe(max);
    expect(parse(row.id, { ...row.minimal, seconds: String(max) }).seconds).toBe(max);
  });

  it.each([min - 1, max + 1, min + 0.5, '8.5', 'eight', true])('refuses seconds %s', (seconds) => {
    const issues = issuesOf(row.id, { ...row.minimal, seconds });
    expect(issues.map((i) => i.loc)).toEqual([['seconds']]);
    if (typeof seconds === 'number' && Number.isInteger(seconds)) {
      expect(issues[0]!.msg).toBe(min === max ? `Input should be ${min} for ${row.id}` : `Input should be between ${min} and ${max} for ${row.id}`);
    }
  });

  it('accepts each of its resolutions and refuses the others', () => {
    for (const tier of ALL_TIERS) {
      if ((row.res as readonly string[]).includes(tier)) expect(parse(row.id, { ...row.minimal, size: tier }).resolution).toBe(tier);
      else {
        const issues = issuesOf(row.id, { ...row.minimal, resolution: tier });
        expect(issues.map((i) => i.loc)).toEqual([['resolution']]);
        expect(issues[0]!.msg).toContain(`Input should be one of: ${row.res.join(', ')}`);
      }
    }
  });

  it('accepts each of its ratios and refuses the others', () => {
    for (const ratio of ALL_RATIOS) {
      if ((row.ratios as readonly string[]).includes(ratio)) expect(parse(row.id, { ...row.minimal, aspect_ratio: ratio }).ratio).toBe(ratio);
      else expect(issuesOf(row.id, { ...row.minimal, ratio })).toEqual([{ loc: ['ratio'], msg: `Input should be one of: ${row.ratios.join(', ')}`, type: 'literal_error' }]);
    }
  });

  it('accepts exactly the dimensions of its tiers and ratios', () => {
    for (const tier of ALL_TIERS) {
      for (const ratio of ALL_RATIOS) {
        const { width, height } = videoDimensions(tier, ratio)!;
        const size = `${width}x${height}`;
        if ((row.res as readonly string[]).includes(tier) && (row.ratios as readonly string[]).includes(ratio)) {
          expect(parse(row.id, { ...row.minimal, size })).toMatchObject({ resolution: tier, ratio, width, height });
        } else {
          expect(locsOf(row.id, { ...row.minimal, size })).toEqual([['size']]);
        }
      }
    }
    expect(locsOf(row.id, { ...row.minimal, size: '1281x720' })).toEqual([['size']]);
  });

  it('refuses an exact size whose ratio conflicts with aspect_ratio', () => {
    const dims = videoDimensions(row.res[0], '16:9')!;
    const issues = issuesOf(row.id, { ...row.minimal, size: `${dims.width}x${dims.height}`, aspect_ratio: '9:16' });
    expect(issues.map((i) => i.loc)).toEqual([['size']]);
    expect(issues[0]!.msg).toContain('conflicts with aspect_ratio 9:16');
  });

  it('refuses alias pairs that disagree, accepts ones that agree', () => {
    expect(locsOf(row.id, { ...row.minimal, size: row.res[0], resolution: 'other' })).toEqual([['resolution']]);
    expect(locsOf(row.id, { ...row.minimal, aspect_ratio: '16:9', ratio: '9:16' })).toEqual([['ratio']]);
    expect(parse(row.id, { ...row.minimal, size: row.res[0], resolution: row.res[0], aspect_ratio: '9:16', ratio: '9:16' })).toMatchObject({ resolution: row.res[0], ratio: '9:16' });
  });

  it('refuses unknown fields but ignores model', () => {
    expect(issuesOf(row.id, { ...row.minimal, n: 1, quality: 'hd' })).toEqual([
      { loc: ['n'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      { loc: ['quality'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
  });

  const native = model.video!.audio === 'native';
  it(native ? 'takes settings: native audio and multi-shot' : 'refuses every setting', () => {
    if (native) {
      expect(parse(row.id, { ...row.minimal, settings: { audio: 'native', multi_shot: true } })).toMatchObject({ audio: 'native', multiShot: true });
      expect(parse(row.id, { ...row.minimal, settings: { audio: 'off' } })).toMatchObject({ audio: 'off', multiShot: false });
      expect(issuesOf(row.id, { ...row.minimal, settings: { audio: 'loud', multi_shot: 'yes', fps: 30 } }).map((i) => [i.loc, i.msg])).toEqual([
        [['settings', 'audio'], 'Input should be one of: native, off'],
        [['settings', 'multi_shot'], 'Input should be a valid boolean'],
        [['settings', 'fps'], 'Extra inputs are not permitted'],
      ]);
    } else {
      expect(parse(row.id, { ...row.minimal, settings: {} }).audio).toBe('off');
      expect(locsOf(row.id, { ...row.minimal, settings: { audio: 'native', multi_shot: false } })).toEqual([
        ['settings', 'audio'],
        ['settings', 'multi_shot'],
      ]);
    }
  });

  it(model.video!.promptExtend ? 'takes prompt_extend' : 'refuses prompt_extend', () => {
    if (model.video!.promptExtend) {
      expect(parse(row.id, { ...row.minimal, prompt_extend: true }).promptExtend).toBe(true);
      expect(locsOf(row.id, { ...row.minimal, prompt_extend: 'yes' })).toEqual([['prompt_extend']]);
    } else {
      expect(locsOf(row.id, { ...row.minimal, prompt_extend: true })).toEqual([['prompt_extend']]);
    }
  });

  it('refuses a prompt over 4000 characters and trims', () => {
    expect(locsOf(row.id, { ...row.minimal, prompt: 'x'.repeat(4001) })).toEqual([['prompt']]);
    expect(parse(row.id, { ...row.minimal, prompt: `  ${'x'.repeat(4000)}  ` }).prompt).toHaveLength(4000);
  });
});

describe('references and modes', () => {
  it('text-to-video needs a prompt', () => {
    expect(issuesOf('alpha-3.0', {})).toEqual([{ loc: ['prompt'], msg: 'Field required for text-to-video', type: 'missing' }]);
    expect(locsOf('beta3.0-t2v', { prompt: '   ' })).toEqual([['prompt']]);
    expect(parse('alpha-3.0', { prompt: 'a cat' }).mode).toBe('text-to-video');
  });

  it('image-to-video allows an empty prompt', () => {
    const spec = parse('alpha-3.0', { references: [img('first_frame'), img('last_frame')] });
    expect(spec).toMatchObject({ mode: 'image-to-video', prompt: null });
    expect(spec.references).toEqual([
      { type: 'image', role: 'first_frame', url: IMG, durationSeconds: null },
      { type: 'image', role: 'last_frame', url: IMG, durationSeconds: null },
    ]);
  });

  it('i2v models require a first_frame image', () => {
    for (const id of ['beta3.0-i2v', 'beta3.0-prime-i2v']) {
      const issues = issuesOf(id, { prompt: 'a cat' });
      expect(issues.map((i) => i.loc)).toEqual([['references']]);
      expect(issues[0]!.msg).toContain('first_frame');
    }
  });

  it('t2v models refuse any reference', () => {
    for (const id of ['beta3.0-t2v', 'beta3.0-prime-t2v']) {
      expect(issuesOf(id, { prompt: 'a cat', references: [img('first_frame')] })).toEqual([
        { loc: ['references', 0, 'type'], msg: `Input should be omitted: ${id} accepts no references`, type: 'literal_error' },
      ]);
    }
  });

  it('last_frame requires a first_frame; at most one of each', () => {
    expect(locsOf('alpha-3.0', { prompt: 'a cat', references: [img('last_frame')] })).toEqual([['references']]);
    expect(locsOf('alpha-3.0-omni', { references: [img('first_frame'), img('first_frame')] })).toEqual([['references']]);
    expect(locsOf('delta-imagine-video-1.5', { references: [img('first_frame'), img('last_frame'), img('last_frame')] })).toEqual([['references']]);
  });

  it.each([
    ['alpha-3.0', ['first_frame', 'last_frame'], 'reference'],
    ['beta3.0-i2v', ['first_frame'], 'last_frame'],
    ['epsilon2.5-01-720', ['reference'], 'first_frame'],
  ])('%s: roles %j allowed, %s refused', (id, allowed, refused) => {
    const base = id === 'epsilon2.5-01-720' ? [] : [img('first_frame')];
    expect(parse(id, { prompt: 'a cat', references: [...base, ...allowed.filter((r) => r !== 'first_frame').map((r) => img(r))] })).toBeTruthy();
    const issues = issuesOf(id, { prompt: 'a cat', references: [...base, img(refused)] });
    expect(issues.some((i) => JSON.stringify(i.loc) === JSON.stringify(['references', base.length, 'role']) && i.msg === `Input should be one of: ${allowed.join(', ')} for ${id}`)).toBe(true);
  });

  it.each([
    ['alpha-3.0', 2, ['first_frame', 'last_frame', 'last_frame']],
    ['alpha-3.0-omni', 4, ['first_frame', 'last_frame', 'reference', 'reference', 'reference']],
    ['beta3.0-i2v', 1, ['first_frame', 'first_frame']],
    ['beta3.0-prime-i2v', 1, ['first_frame', 'first_frame']],
    ['gamma_h3', 9, ['first_frame', ...Array<string>(9).fill('reference')]],
    ['delta-imagine-video-1.5', 7, ['first_frame', 'last_frame', ...Array<string>(6).fill('reference')]],
    ['epsilon2.5-01-720', 9, Array<string>(10).fill('reference')],
  ])('%s: %i images accepted, one more refused', (id, limit, roles) => {
    const atLimit = roles.slice(0, limit).map((r) => img(r));
    expect(parse(id, { prompt: 'a cat', references: atLimit }).references).toHaveLength(limit);
    const issues = issuesOf(id, { prompt: 'a cat', references: roles.map((r) => img(r)) });
    expect(issues.map((i) => i.msg)).toContain(`Input should have at most ${limit} image references for ${id}`);
  });

  it('multi-reference: reference images on a model with that mode, prompt optional', () => {
    expect(parse('epsilon2.5-01-720', { references: [img('reference')] })).toMatchObject({ mode: 'multi-reference', prompt: null });
    expect(parse('alpha-3.0-omni', { references: [img('reference')] }).mode).toBe('multi-reference');
    expect(parse('alpha-3.0-omni', { references: [img('first_frame'), img('reference')] }).mode).toBe('image-to-video');
    // gamma_h3 and delta have no multi-reference mode: reference images ride along a text-to-video job.
    expect(parse('gamma_h3', { prompt: 'a cat', references: [img('reference')] }).mode).toBe('text-to-video');
    expect(locsOf('delta-imagine-video-1.5', { references: [img('reference')] })).toEqual([['prompt']]);
  });

  it('video references: gamma_h3 only, up to 3, role reference', () => {
    const vid = (role = 'reference') => ({ type: 'video', role, url: 'https://example.com/v.mp4' });
    expect(parse('gamma_h3', { prompt: 'a cat', references: [vid(), vid(), vid()] }).references).toHaveLength(3);
    expect(issuesOf('gamma_h3', { prompt: 'a cat', references: [vid(), vid(), vid(), vid()] }).map((i) => i.msg)).toEqual([
      'Input should have at most 3 video references for gamma_h3',
    ]);
    expect(locsOf('gamma_h3', { prompt: 'a cat', references: [vid('first_frame')] })).toEqual([['references', 0, 'role']]);
    expect(locsOf('alpha-3.0-omni', { prompt: 'a cat', references: [vid()] })).toEqual([['references', 0, 'type']]);
  });

  it('gamma_h3 audio references: 2 to 15 seconds, up to 3, measured data: URLs up to 15 MB', () => {
    expect(parse('gamma_h3', { prompt: 'a cat', references: [audioRef(2), audioRef(15), audioRef(7.5)] }).references.map((r) => r.durationSeconds)).toEqual([2, 15, 7.5]);
    expect(locsOf('gamma_h3', { prompt: 'a cat', references: [audioRef(1), audioRef(16)] })).toEqual([
      ['references', 0, 'duration'],
      ['references', 1, 'duration'],
    ]);
    expect(locsOf('gamma_h3', { prompt: 'a cat', references: [{ type: 'audio', url: 'https://example.com/a.mp3' }] })).toEqual([['references', 0, 'duration']]);
    expect(locsOf('gamma_h3', { prompt: 'a cat', references: [audioRef(3), audioRef(3), audioRef(3), audioRef(3)] })).toEqual([['references']]);
    const exactly15MiB = 'data:audio/mpeg;base64,' + 'A'.repeat((15 * 1024 * 1024 * 4) / 3);
    expect(parse('gamma_h3', { prompt: 'a cat', references: [audioRef(3, exactly15MiB)] }).references).toHaveLength(1);
    const over = exactly15MiB + 'AAAA';
    expect(issuesOf('gamma_h3', { prompt: 'a cat', references: [audioRef(3, over)] })).toEqual([
      { loc: ['references', 0, 'url'], msg: 'Input should be at most 15 MB of audio', type: 'value_error' },
    ]);
  });

  it('audio references are refused on models without audio by reference', () => {
    for (const id of ['alpha-3.0', 'alpha-3.0-omni', 'delta-imagine-video-1.5', 'epsilon2.5-01-720']) {
      expect(locsOf(id, { prompt: 'a cat', references: [audioRef(3)] })).toEqual([['references', 0, 'type']]);
    }
  });

  it('urls must be http, https or data:', () => {
    expect(parse('alpha-3.0', { references: [img('first_frame', 'http://example.com/a.png')] }).references).toHaveLength(1);
    expect(parse('alpha-3.0', { references: [img('first_frame', 'data:image/png;base64,iVBORw0KGgo=')] }).references).toHaveLength(1);
    for (const url of ['file:///etc/passwd', 'ftp://example.com/a.png', 'javascript:alert(1)', 'not a url', 'data:image/png;base64']) {
      expect(locsOf('alpha-3.0', { prompt: 'a cat', references: [img('first_frame', url)] })).toEqual([['references', 0, 'url']]);
    }
  });

  it('malformed references are reported where they are', () => {
    expect(issuesOf('gamma_h3', { prompt: 'a cat', references: [{ type: 'gif', role: 'cover', extra: 1 }, 'x'] })).toEqual([
      { loc: ['references', 0, 'type'], msg: 'Input should be one of: image, video, audio', type: 'literal_error' },
      { loc: ['references', 0, 'role'], msg: 'Input should be one of: first_frame, last_frame, reference', type: 'literal_error' },
      { loc: ['references', 0, 'url'], msg: 'Field required', type: 'missing' },
      { loc: ['references', 0, 'extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      { loc: ['references', 1], msg: 'Input should be a valid object', type: 'dict_type' },
    ]);
    expect(locsOf('gamma_h3', { prompt: 'a cat', references: 'x' })).toEqual([['references']]);
  });
});

describe('all problems at once', () => {
  it('reports every violation in one error', () => {
    expect(
      locsOf('beta3.0-t2v', {
        prompt: 5,
        seconds: 31,
        size: '4k',
        aspect_ratio: '1:1',
        settings: { audio: 'native' },
        references: [img('first_frame')],
        prompt_extend: 'yes',
        n: 2,
      }),
    ).toEqual([['n'], ['prompt'], ['seconds'], ['aspect_ratio'], ['size'], ['settings', 'audio'], ['prompt_extend'], ['references', 0, 'type']]);
  });

  it('refuses a body that is not an object', () => {
    expect(() => parseVideoRequest([], modelOf('alpha-3.0'))).toThrow(DomainError);
    expect(() => parseVideoRequest(null, modelOf('alpha-3.0'))).toThrow(DomainError);
  });
});

describe('videoCost', () => {
  it('per second x seconds, or per generation', () => {
    const beta = parse('beta3.0-t2v', { prompt: 'a cat', seconds: 10 });
    expect(videoCost(beta, catalog.priceOf('beta3.0-t2v', 'cheap', 'siberia')!).toFixed()).toBe('0.38');
    const alpha = parse('alpha-3.0', { prompt: 'a cat', seconds: '15' });
    expect(videoCost(alpha, catalog.priceOf('alpha-3.0', 'cheap', 'siberia')!).toFixed()).toBe('2.1');
    const delta = parse('delta-imagine-video-1.5', { prompt: 'a cat', seconds: 15 });
    expect(videoCost(delta, catalog.priceOf('delta-imagine-video-1.5', 'cheap', 'siberia')!).toFixed()).toBe('0.18');
  });
});
