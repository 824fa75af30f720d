import { usageOf } from '../../providers/openai-compatible/chat.js';
import type { ResponseIdentity } from '../../canonical.js';
import { parseData, SameFormatStream, withReasoning } from '../../same-format.js';
import type { SseEvent } from '../../sse.js';
import type { ParsedRequest, SameFormat } from '../client-format.js';
import { chatIdentity, deliveredTextOf, publicChunk, publicCompletion } from './answer.js';

/** Chat completions from a chat upstream: only documented fields of each choice go out (see publicChunk), usage only when asked. */
export const chatSameFormat: SameFormat = {
  json(body, who) {
    const usage = withReasoning(usageOf(body?.usage), body?.usage?.completion_tokens_details?.reasoning_tokens ?? null);
    const deliveredText = (Array.isArray(body?.choices) ? body.choices : []).map((c: any) => `${c?.message?.content ?? ''}${JSON.stringify(c?.message?.tool_calls ?? '')}`).join('');
    return { body: publicCompletion(body, chatIdentity(who), usage), usage, deliveredText };
  },
  stream: (who, parsed) => new ChatStream(chatIdentity(who), parsed),
};

/** A JSON scalar without escapes (a field the rewrite drops, so its exact text never matters). */
const PLAIN_SCALAR = String.raw`(?:null|true|false|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|"[^"\\\u0000-\u001f]*")`;
/** A top-level field publicChunk drops: any but `choices`, `error` (an in-band error) and a non-null `usage`. */
const DROPPED_FIELD = String.raw`(?:"usage":null|"(?!choices"|error"|usage")\w+":${PLAIN_SCALAR})`;
/** A valid JSON string literal (what JSON.parse accepts). */
const STRING_LITERAL = String.raw`"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;
/**
 * A plain content chunk, most of any chat stream, in the layout OpenAI-compatible servers write it
 * (compact, `choices` a single text delta, every other field a scalar); its one group is the content as
 * a JSON string literal. Matching it costs a fraction of parsing the chunk, building its public copy
 * and serialising that again, which was the relay's largest cost per stream. Any other chunk (a
 * role, tool calls, a finish reason, usage, an error, logprobs, whitespace, nested extras) is parsed.
 */
const PLAIN_CONTENT_CHUNK = new RegExp(
  String.raw`^\{(?:${DROPPED_FIELD},)*"choices":\[\{"index":0,"delta":\{"content":(${STRING_LITERAL})\},"logprobs":null,"finish_reason":null\}\](?:,${DROPPED_FIELD})*\}$`,
);

/** The content literal of a plain content chunk (see PLAIN_CONTENT_CHUNK), or null when the chunk must be parsed. */
export function plainContentOf(data: string): string | null {
  return PLAIN_CONTENT_CHUNK.exec(data)?.[1] ?? null;
}

class ChatStream extends SameFormatStream {
  /**
   * A plain content chunk's frame before and after its content literal, cut once per stream from
   * publicChunk's own output for such a chunk, so the plain path cannot drift from the parsed one.
   */
  private readonly plainFrame: [string, string];

  constructor(
    private readonly who: ResponseIdentity,
    private readonly parsed: ParsedRequest,
  ) {
    super();
    const frame = `data: ${JSON.stringify(publicChunk({ choices: [{ index: 0, delta: { content: '' }, logprobs: null, finish_reason: null }] }, who, null))}\n\n`;
    const at = frame.indexOf('"content":""') + '"content":'.length;
    this.plainFrame = [frame.slice(0, at), frame.slice(at + '""'.length)];
  }

  push(event: SseEvent): string {
    if (event.data === '[DONE]') {
      this.done = true;
      return '';
    }
    const content = plainContentOf(event.data);
    if (content !== null) {
      this.delivered += content.includes('\\') ? (JSON.parse(content) as string) : content.slice(1, -1);
      return `${this.plainFrame[0]}${content}${this.plainFrame[1]}`;
    }
    const chunk = parseData(event.data);
    if (!chunk) return '';
    if (chunk.error) {
      this.error = event.data.slice(0, 500);
      return '';
    }
    const reported = usageOf(chunk.usage);
    if (reported) this.usage = withReasoning(reported, chunk.usage?.completion_tokens_details?.reasoning_tokens ?? null);
    this.delivered += deliveredTextOf(chunk);
    const usageOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0;
    if (usageOnly && !this.parsed.streamUsage) return '';
    return `data: ${JSON.stringify(publicChunk(chunk, this.who, this.parsed.streamUsage ? reported : null))}\n\n`;
  }

  finish(): string {
    return 'data: [DONE]\n\n';
  }

  fail(message: string, code: string): string {
    return `data: ${JSON.stringify({ error: { message, type: 'server_error', code, param: null } })}\n\n`;
  }
}
