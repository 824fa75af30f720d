import { expect } from 'vitest';
import type { CanonicalRequest, CanonicalResponse } from '../../src/inference/canonical.js';
import { CLIENT_FORMATS } from '../../src/inference/client-formats.js';
import { anthropic, openAiCompatible } from '../../src/inference/providers/index.js';
import { DomainError } from '../../src/shared/errors.js';

/** What the field-by-field tests (test/unit/inference-fields-*.test.ts) share: requests of each format and what each upstream kind makes of them. */

export const who = { id: 'f1', model: 'gen-5.6-luna', created: 1_795_325_000 };
export const parse = (format: keyof typeof CLIENT_FORMATS, body: object) => CLIENT_FORMATS[format].parse(body);
export const responses = (extra: object) => parse('openai-responses', { model: 'm', input: 'hi', ...extra });
export const chat = (extra: object) => parse('openai-chat', { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra });
export const messages = (extra: object) => parse('anthropic-messages', { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra });
export const toChat = (request: CanonicalRequest) => openAiCompatible.body(request, 'up') as Record<string, any>;
export const toAnthropic = (request: CanonicalRequest) => anthropic.body(request, 'up') as Record<string, any>;

/** The issues (loc joined) a provider refuses a request with. */
export function refused(build: () => unknown): string[] {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    expect((error as DomainError).reason).toBe('unsupported_field');
    return (error as DomainError).issues.map((i) => i.loc.join('.'));
  }
  return expect.unreachable('the request was accepted');
}

export const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
export const weatherTool = { type: 'function', name: 'get_weather', parameters: SCHEMA };

/** A Responses request with a custom and a namespaced tool, asking for reasoning summaries. */
export const CUSTOM_REQUEST = responses({
  reasoning: { effort: 'medium', summary: 'auto' },
  tools: [{ type: 'custom', name: 'apply_patch' }, { type: 'namespace', name: 'crm', description: 'CRM', tools: [{ type: 'function', name: 'lookup', parameters: SCHEMA }] }],
}).canonical;

/** An answer to it: signed Anthropic reasoning, then a call of each tool under its flat name. */
export const CUSTOM_ANSWER: CanonicalResponse = {
  parts: [
    { type: 'reasoning', text: 'plan the patch', summary: [], opaque: { family: 'anthropic', signature: 'sig-r' } },
    { type: 'tool_call', id: 'call_1', name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch"}' },
    { type: 'tool_call', id: 'call_2', name: 'crm__lookup', arguments: '{"city":"x"}' },
  ],
  stopReason: 'tool_use',
  usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: 3 },
};
