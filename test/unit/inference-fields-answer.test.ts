import { describe, expect, it } from 'vitest';
import type { CanonicalResponse, ReasoningPart } from '../../src/inference/canonical.js';
import { renderMessage } from '../../src/inference/formats/anthropic-messages/answer.js';
import { renderChatCompletion } from '../../src/inference/formats/openai-chat/answer.js';
import { ChatStreamEncoder } from '../../src/inference/formats/openai-chat/stream.js';
import { renderResponse } from '../../src/inference/formats/openai-responses/answer.js';
import { encryptedContentOf } from '../../src/inference/formats/openai-responses/reasoning.js';
import { ChatStreamDecoder, fromChatCompletion } from '../../src/inference/providers/openai-compatible/chat.js';
import { CUSTOM_ANSWER, CUSTOM_REQUEST, messages, responses, who } from '../helpers/inference-fields.js';

/** What each client format shows of an answer (JSON): reasoning, and tool calls under the client's own names (docs/inference-fields.md). */

describe('Answers in each client format: reasoning and mapped tool calls', () => {
  it('Responses JSON: a reasoning item with a summary and packed encrypted content; custom and namespaced calls under the client names', () => {
    const out = renderResponse(CUSTOM_ANSWER, who, CUSTOM_REQUEST);
    expect(out.output).toEqual([
      { id: 'rs_f1_0', type: 'reasoning', status: 'completed', summary: [{ type: 'summary_text', text: 'plan the patch' }], encrypted_content: encryptedContentOf(CUSTOM_ANSWER.parts[0] as ReasoningPart) },
      { id: 'ctc_f1_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' },
      { id: 'fc_f1_2', type: 'function_call', status: 'completed', call_id: 'call_2', name: 'lookup', arguments: '{"city":"x"}', namespace: 'crm' },
    ]);
    expect(out.reasoning).toEqual({ effort: 'medium', summary: 'auto' });
  });


  it('Responses without a summary request show reasoning as reasoning_text content', () => {
    const out = renderResponse({ ...CUSTOM_ANSWER, parts: [{ type: 'reasoning', text: 'r', summary: [], opaque: null }] }, who, responses({}).canonical);
    expect(out.output).toEqual([{ id: 'rs_f1_0', type: 'reasoning', status: 'completed', summary: [], content: [{ type: 'reasoning_text', text: 'r' }] }]);
  });

  it('chat: reasoning_content from a chat upstream reads as a reasoning part and renders back, in JSON and streams', () => {
    const upstream = { choices: [{ message: { role: 'assistant', content: 'Deep.', reasoning_content: 'depth is 1642 m' }, finish_reason: 'stop' }] };
    const canonical = fromChatCompletion(upstream);
    expect(canonical.parts).toEqual([
      { type: 'reasoning', text: 'depth is 1642 m', summary: [], opaque: null },
      { type: 'text', text: 'Deep.' },
    ]);
    expect(renderChatCompletion(canonical, who)).toMatchObject({ choices: [{ message: { content: 'Deep.', reasoning_content: 'depth is 1642 m' } }] });
    const decoder = new ChatStreamDecoder();
    const chunk = (delta: object, finish: string | null = null) => ({ event: null, data: JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const events = [chunk({ reasoning: 'hm' }), chunk({ content: 'ok' }), chunk({}, 'stop')].flatMap((e) => decoder.push(e));
    expect(events).toEqual([
      { type: 'reasoning_delta', index: 0, text: 'hm' },
      { type: 'text_delta', index: 1, text: 'ok' },
      { type: 'part_end', index: 0 },
      { type: 'part_end', index: 1 },
      { type: 'stop', reason: 'end' },
    ]);
    const encoder = new ChatStreamEncoder({ ...who, id: 'chatcmpl-f1' }, false);
    expect(encoder.event(events[0]!)).toContain('"delta":{"reasoning_content":"hm"}');
  });

  it('Messages: thinking blocks with signatures when the client turned thinking on, none otherwise', () => {
    const thinkingOn = messages({ thinking: { type: 'enabled', budget_tokens: 2048 } }).canonical;
    const parts: CanonicalResponse['parts'] = [
      { type: 'reasoning', text: 'signed', summary: [], opaque: { family: 'anthropic', signature: 's1' } },
      { type: 'reasoning', text: '', summary: [], opaque: { family: 'anthropic', redactedData: 'r==' } },
      { type: 'reasoning', text: 'from a chat upstream', summary: [], opaque: null },
      { type: 'text', text: 'Hi' },
    ];
    const shown = renderMessage({ parts, stopReason: 'end', usage: null }, who, thinkingOn) as { content: object[] };
    expect(shown.content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 's1' },
      { type: 'redacted_thinking', data: 'r==' },
      { type: 'thinking', thinking: 'from a chat upstream', signature: '' },
      { type: 'text', text: 'Hi' },
    ]);
    expect((renderMessage({ parts, stopReason: 'end', usage: null }, who, messages({}).canonical) as { content: object[] }).content).toEqual([{ type: 'text', text: 'Hi' }]);
  });

});
