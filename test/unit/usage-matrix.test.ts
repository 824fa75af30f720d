import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalEvent, CanonicalUsage } from '../../src/inference/canonical.js';
import { CLIENT_FORMATS, type ClientFormatId } from '../../src/inference/client-formats.js';
import type { ParsedRequest } from '../../src/inference/formats/client-format.js';
import { PROVIDER_KINDS } from '../../src/inference/providers/index.js';
import { SseSplitter } from '../../src/inference/sse.js';

/**
 * Usage accounting across every client format x upstream kind x stream mode: the upstream's own
 * usage (recorded-style fixtures) is read into canonical buckets once, and every client format
 * reports those buckets back in its own fields.
 */
const fixture = (path: string) => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');

const UPSTREAMS: Record<'openai-compatible' | 'anthropic', { json: string; stream: string; usage: CanonicalUsage }[]> = {
  'openai-compatible': [
    { json: 'openai-chat/completion-cached.json', stream: '', usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, cacheWriteTokens: null, reasoningTokens: 10 } },
    { json: '', stream: 'openai-chat/stream-with-extras.sse', usage: { inputTokens: 12, outputTokens: 2, cacheReadTokens: 4, cacheWriteTokens: null, reasoningTokens: null } },
  ],
  anthropic: [
    // Anthropic counts cache reads and writes apart from input_tokens: 37 + 2048 + 512 input tokens in all.
    { json: 'anthropic-messages/message-tool-use.json', stream: '', usage: { inputTokens: 2597, outputTokens: 89, cacheReadTokens: 2048, cacheWriteTokens: 512, reasoningTokens: null } },
    { json: '', stream: 'anthropic-messages/stream-tool-use.sse', usage: { inputTokens: 2597, outputTokens: 89, cacheReadTokens: 2048, cacheWriteTokens: 512, reasoningTokens: null } },
  ],
};

/** A minimal valid request of each format, parsed as the gateway parses it. */
const REQUESTS: Record<ClientFormatId, unknown> = {
  'openai-chat': { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } },
  'anthropic-messages': { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
  'openai-responses': { model: 'm', input: 'hi' },
};

/** What a client of each format reads as usage, back in canonical buckets (null where the format has no field). */
function bucketsSeenBy(format: ClientFormatId, usage: any): Partial<CanonicalUsage> {
  switch (format) {
    case 'openai-chat':
      return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, cacheReadTokens: usage.prompt_tokens_details?.cached_tokens ?? null };
    case 'anthropic-messages':
      return {
        inputTokens: usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
        outputTokens: usage.output_tokens,
        cacheReadTokens: usage.cache_read_input_tokens ?? null,
        cacheWriteTokens: usage.cache_creation_input_tokens ?? null,
      };
    case 'openai-responses':
      return { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, cacheReadTokens: usage.input_tokens_details.cached_tokens };
  }
}

function expectedFor(format: ClientFormatId, usage: CanonicalUsage): Partial<CanonicalUsage> {
  const common = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  switch (format) {
    case 'openai-chat':
      return { ...common, cacheReadTokens: usage.cacheReadTokens };
    case 'anthropic-messages':
      return { ...common, cacheReadTokens: usage.cacheReadTokens, cacheWriteTokens: usage.cacheWriteTokens };
    case 'openai-responses':
      return { ...common, cacheReadTokens: usage.cacheReadTokens ?? 0 };
  }
}

/** The usage object a client finds at the end of a stream in its format. */
function usageInStream(format: ClientFormatId, sse: string): any {
  const events = new SseSplitter().push(Buffer.from(sse)).filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
  switch (format) {
    case 'openai-chat':
      return events.findLast((e) => e.usage)?.usage;
    case 'anthropic-messages':
      return events.findLast((e) => e.type === 'message_delta')?.usage;
    case 'openai-responses':
      return events.findLast((e) => e.type === 'response.completed')?.response.usage;
  }
}

const who = { id: 'abc', model: 'm', created: 1 };

describe('usage accounting matrix', () => {
  for (const formatId of Object.keys(CLIENT_FORMATS) as ClientFormatId[]) {
    const format = CLIENT_FORMATS[formatId];
    const parsed: ParsedRequest = format.parse(REQUESTS[formatId]);
    for (const [kindId, cases] of Object.entries(UPSTREAMS) as ['openai-compatible' | 'anthropic', (typeof UPSTREAMS)['anthropic']][]) {
      const kind = PROVIDER_KINDS[kindId]!;
      for (const { json, stream, usage } of cases) {
        if (json) {
          it(`${formatId} client <- ${kindId} upstream, JSON: ${json}`, () => {
            const answer = kind.fromResponse(JSON.parse(fixture(json)));
            expect(answer.usage).toEqual(usage);
            const rendered: any = format.render(answer, who, parsed);
            expect(bucketsSeenBy(formatId, rendered.usage)).toEqual(expectedFor(formatId, usage));
          });
        }
        if (stream) {
          it(`${formatId} client <- ${kindId} upstream, stream: ${stream}`, () => {
            const decoder = kind.decoder();
            const encoder = format.encoder(who, parsed);
            let out = encoder.start();
            let billed: CanonicalUsage | null = null;
            const events: CanonicalEvent[] = new SseSplitter().push(Buffer.from(fixture(stream))).flatMap((e) => decoder.push(e));
            for (const event of events) {
              if (event.type === 'usage') billed = event.usage;
              out += encoder.event(event);
            }
            expect(decoder.done).toBe(true);
            expect(billed).toEqual(usage);
            out += encoder.finish(billed);
            expect(bucketsSeenBy(formatId, usageInStream(formatId, out))).toEqual(expectedFor(formatId, usage));
          });
        }
      }
    }
  }
});
