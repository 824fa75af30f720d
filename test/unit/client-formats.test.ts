import { describe, expect, it } from 'vitest';
import { errorShapeOfPath } from '../../rest-shim/v1/errors.js';
import { CLIENT_FORMATS, FORMAT_OF_ENDPOINT } from '../../src/inference/client-formats.js';
import { MESSAGES_ERRORS } from '../../src/inference/formats/anthropic-messages/errors.js';
import { OPENAI_ERRORS } from '../../src/inference/formats/openai-errors.js';
import { PROVIDER_KINDS } from '../../src/inference/providers/index.js';

/** The registry is one line per format; what the rest of the gateway reads of a format comes from the format itself. */
describe('the client format registry', () => {
  const formats = Object.entries(CLIENT_FORMATS);

  it('keys each format by its own id', () => {
    for (const [id, format] of formats) expect(format.id).toBe(id);
  });

  it('maps each endpoint a format lists to that format, and no endpoint to two', () => {
    const listed = formats.flatMap(([, format]) => format.endpoints);
    expect(new Set(listed).size).toBe(listed.length);
    for (const [, format] of formats) for (const endpoint of format.endpoints) expect(FORMAT_OF_ENDPOINT[endpoint]).toBe(format);
    expect(Object.keys(FORMAT_OF_ENDPOINT).sort()).toEqual([...listed].sort());
  });

  it('has provider kinds name only registered formats among those they take as they are', () => {
    for (const kind of Object.values(PROVIDER_KINDS)) for (const id of Object.keys(kind!.native)) expect(Object.keys(CLIENT_FORMATS)).toContain(id);
  });

  it("answers errors on a format's endpoints and below them in its shape, elsewhere in OpenAI's", () => {
    expect(errorShapeOfPath('/v1/messages')).toBe(MESSAGES_ERRORS);
    expect(errorShapeOfPath('/v1/messages/count_tokens')).toBe(MESSAGES_ERRORS);
    expect(errorShapeOfPath('/v1/messagesx')).toBe(OPENAI_ERRORS);
    expect(errorShapeOfPath('/v1/chat/completions')).toBe(OPENAI_ERRORS);
    expect(errorShapeOfPath('/v1/images/generations')).toBe(OPENAI_ERRORS);
    expect(errorShapeOfPath('/v1/unknown')).toBe(OPENAI_ERRORS);
  });
});
