import { describe, expect, it } from 'vitest';
import { renderResponse } from '../../src/inference/formats/openai-responses/answer.js';
import { encryptedContentOf } from '../../src/inference/formats/openai-responses/reasoning.js';
import { anthropic, openAiCompatible } from '../../src/inference/providers/index.js';
import { DomainError } from '../../src/shared/errors.js';
import { chat, messages, parse, refused, responses, SCHEMA, toAnthropic, toChat, weatherTool, who } from '../helpers/inference-fields.js';

/**
 * Every request field that changes the answer, field by field, on both upstream kinds: what a
 * Responses, chat or Messages request becomes on an openai-compatible (chat completions) upstream and
 * on an anthropic upstream. docs/inference-fields.md names these tests in its "test" column: keep the
 * two in step.
 */

describe('Responses request fields on both upstream kinds', () => {
  it('text.format json_schema -> chat response_format json_schema / Anthropic output_config.format', () => {
    const { canonical } = responses({ text: { format: { type: 'json_schema', name: 'city', schema: SCHEMA, strict: true } } });
    expect(toChat(canonical).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'city', schema: SCHEMA, strict: true } });
    expect(toAnthropic(canonical).output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } });
  });

  it('text.format json_object -> chat response_format json_object / refused for Anthropic naming text.format', () => {
    const { canonical } = responses({ text: { format: { type: 'json_object' } } });
    expect(toChat(canonical).response_format).toEqual({ type: 'json_object' });
    expect(refused(() => anthropic.check(canonical))).toEqual(['text.format']);
    expect(refused(() => toAnthropic(canonical))).toEqual(['text.format']);
  });

  it('reasoning.effort -> chat reasoning_effort (limit as max_completion_tokens) / Anthropic output_config.effort with adaptive thinking', () => {
    const { canonical } = responses({ reasoning: { effort: 'high', summary: 'auto' }, max_output_tokens: 900 });
    expect(toChat(canonical)).toMatchObject({ reasoning_effort: 'high', max_completion_tokens: 900 });
    expect(toChat(canonical)).not.toHaveProperty('max_tokens');
    expect(toAnthropic(canonical)).toMatchObject({ max_tokens: 900, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    // The scales' ends: none turns thinking off, minimal is Anthropic's low, xhigh is its max.
    expect(toAnthropic(responses({ reasoning: { effort: 'none' } }).canonical)).not.toHaveProperty('thinking');
    expect(toChat(responses({ reasoning: { effort: 'none' } }).canonical).reasoning_effort).toBe('none');
    expect(toAnthropic(responses({ reasoning: { effort: 'minimal' } }).canonical).output_config).toEqual({ effort: 'low' });
    expect(toAnthropic(responses({ reasoning: { effort: 'xhigh' } }).canonical).output_config).toEqual({ effort: 'max' });
  });

  it('max_output_tokens -> chat max_tokens / Anthropic max_tokens', () => {
    const { canonical } = responses({ max_output_tokens: 321 });
    expect(toChat(canonical).max_tokens).toBe(321);
    expect(toAnthropic(canonical).max_tokens).toBe(321);
  });

  it('parallel_tool_calls false -> chat parallel_tool_calls / Anthropic tool_choice.disable_parallel_tool_use', () => {
    const { canonical } = responses({ tools: [weatherTool], parallel_tool_calls: false });
    expect(toChat(canonical).parallel_tool_calls).toBe(false);
    expect(toAnthropic(canonical).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    const forced = responses({ tools: [weatherTool], parallel_tool_calls: false, tool_choice: 'required' }).canonical;
    expect(toAnthropic(forced).tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
  });

  it('tool_choice function / allowed_tools / required on both kinds; a hosted tool forced is refused naming tool_choice', () => {
    const tools = [weatherTool, { type: 'function', name: 'now', parameters: { type: 'object', properties: {} } }];
    const named = responses({ tools, tool_choice: { type: 'function', name: 'now' } }).canonical;
    expect(toChat(named).tool_choice).toEqual({ type: 'function', function: { name: 'now' } });
    expect(toAnthropic(named).tool_choice).toEqual({ type: 'tool', name: 'now' });
    const allowed = responses({ tools, tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'now' }] } }).canonical;
    expect(toChat(allowed).tool_choice).toEqual({ type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'now' } }] } });
    // Anthropic has no allowed list: only the allowed tools are sent, and `required` is `any`.
    expect(toAnthropic(allowed)).toMatchObject({ tools: [{ name: 'now' }], tool_choice: { type: 'any' } });
    const hosted = responses({ tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } });
    expect(hosted.withheldTools).toEqual(['web_search']);
    expect(refused(() => openAiCompatible.check(hosted.canonical))).toEqual(['tool_choice']);
    expect(refused(() => anthropic.check(hosted.canonical))).toEqual(['tool_choice']);
  });

  it('user / safety_identifier -> chat user / Anthropic metadata.user_id (safety_identifier first)', () => {
    const { canonical } = responses({ user: 'old-style', safety_identifier: 'hashed-7' });
    expect(toChat(canonical).user).toBe('hashed-7');
    expect(toAnthropic(canonical).metadata).toEqual({ user_id: 'hashed-7' });
    expect(toAnthropic(responses({ user: 'u-2' }).canonical).metadata).toEqual({ user_id: 'u-2' });
  });

  it('prompt_cache_key and text.verbosity -> chat prompt_cache_key and verbosity / dropped for Anthropic', () => {
    const { canonical } = responses({ prompt_cache_key: 'thread-1', text: { verbosity: 'low' } });
    expect(toChat(canonical)).toMatchObject({ prompt_cache_key: 'thread-1', verbosity: 'low' });
    const body = toAnthropic(canonical);
    expect(JSON.stringify(body)).not.toContain('thread-1');
    expect(body).not.toHaveProperty('verbosity');
  });

  it('metadata, service_tier, store, include, truncation, client_metadata: accepted, not sent to either kind, metadata echoed', () => {
    const parsed = responses({ metadata: { run: '42' }, service_tier: 'priority', store: false, include: ['reasoning.encrypted_content'], truncation: 'auto', client_metadata: { x: 1 }, stream_options: { include_obfuscation: false } });
    for (const body of [toChat(parsed.canonical), toAnthropic(parsed.canonical)]) {
      expect(body).not.toHaveProperty('service_tier');
      expect(JSON.stringify(body)).not.toContain('"run"');
    }
    expect(renderResponse({ parts: [], stopReason: 'end', usage: null }, who, parsed.canonical).metadata).toEqual({ run: '42' });
  });

  it('temperature and top_p -> both kinds (Anthropic takes top_p only without temperature)', () => {
    const { canonical } = responses({ temperature: 0.3, top_p: 0.8 });
    expect(toChat(canonical)).toMatchObject({ temperature: 0.3, top_p: 0.8 });
    expect(toAnthropic(canonical)).toMatchObject({ temperature: 0.3 });
    expect(toAnthropic(canonical)).not.toHaveProperty('top_p');
  });

  it('temperature above 1 (OpenAI allows up to 2) -> carried to chat, refused naming the field for Anthropic (its limit is 1)', () => {
    const { canonical } = responses({ temperature: 1.5 });
    expect(toChat(canonical)).toMatchObject({ temperature: 1.5 });
    expect(refused(() => anthropic.check(canonical))).toEqual(['temperature']);
    expect(() => anthropic.check(responses({ temperature: 1 }).canonical)).not.toThrow();
  });

  it('top_logprobs, max_tool_calls, background, prompt and file inputs: refused naming the field on both kinds', () => {
    const parsed = responses({
      top_logprobs: 3,
      max_tool_calls: 2,
      background: true,
      prompt: { id: 'pmpt_1' },
      input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }],
    });
    const expected = ['top_logprobs', 'max_tool_calls', 'background', 'prompt', 'input.0.content.0.type'];
    expect(refused(() => openAiCompatible.check(parsed.canonical))).toEqual(expected);
    expect(refused(() => anthropic.check(parsed.canonical))).toEqual(expected);
  });

  it('custom tools (Codex apply_patch) -> a function with one string parameter `input`, on both kinds; the grammar is described', () => {
    const { canonical } = responses({ tools: [{ type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' } }] });
    const parameters = { type: 'object', properties: { input: { type: 'string', description: 'The input must match this lark grammar:\nstart: "*** Begin Patch"' } }, required: ['input'], additionalProperties: false };
    expect(toChat(canonical).tools).toEqual([{ type: 'function', function: { name: 'apply_patch', description: 'Edit files', parameters } }]);
    expect(toAnthropic(canonical).tools).toEqual([{ name: 'apply_patch', description: 'Edit files', input_schema: parameters }]);
  });

  it('namespace tools -> flattened functions on both kinds; calls in the input use the flat names', () => {
    const tools = [
      { type: 'namespace', name: 'crm', description: 'The CRM', tools: [{ type: 'function', name: 'lookup', description: 'Find a customer', parameters: SCHEMA }] },
      // A plain tool already named like the flat name: the namespaced one gets a hashed name instead.
      { type: 'function', name: 'mail__send', parameters: SCHEMA },
      { type: 'namespace', name: 'mail', description: 'Mail', tools: [{ type: 'function', name: 'send', parameters: SCHEMA }] },
    ];
    const input = [
      { role: 'user', content: 'go' },
      { type: 'function_call', call_id: 'c1', name: 'lookup', namespace: 'crm', arguments: '{"city":"x"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'found' },
    ];
    const { canonical } = responses({ tools, input });
    const names = canonical.tools.map((t) => t.name);
    expect(names[0]).toBe('crm__lookup');
    expect(names[1]).toBe('mail__send');
    expect(names[2]).toMatch(/^mail__send_[0-9a-f]{8}$/);
    expect(canonical.tools[0]!.description).toBe('The CRM\n\nFind a customer');
    expect(toChat(canonical).messages[1].tool_calls[0].function.name).toBe('crm__lookup');
    expect(toAnthropic(canonical).messages[1].content[0]).toMatchObject({ type: 'tool_use', name: 'crm__lookup' });
    expect(toAnthropic(canonical).tools.map((t: { name: string }) => t.name)).toEqual(names);
  });

  it('reasoning input items: our packed Anthropic thinking goes back signed to Anthropic; chat upstreams get no reasoning', () => {
    const packed = encryptedContentOf({ type: 'reasoning', text: 'think', summary: [], opaque: { family: 'anthropic', signature: 'sig-9' } })!;
    const input = [
      { role: 'user', content: 'go' },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'think' }], encrypted_content: packed },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"x"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'cold' },
      // OpenAI's own encrypted reasoning cannot go to either kind.
      { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAA-openai' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed' },
    ];
    const { canonical } = responses({ tools: [weatherTool], input, reasoning: { effort: 'medium' } });
    expect(canonical.untranslatable).toEqual([]);
    const assistant = toAnthropic(canonical).messages[1];
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'think', signature: 'sig-9' });
    // The tool loop keeps thinking on, since its signed thinking came back.
    expect(toAnthropic(canonical).thinking).toEqual({ type: 'adaptive' });
    expect(JSON.stringify(toChat(canonical))).not.toContain('sig-9');
    expect(JSON.stringify(toAnthropic(canonical))).not.toContain('gAAAA-openai');
  });

  it('a tool loop without signed thinking is sent to Anthropic without thinking (the upstream would refuse it)', () => {
    const input = [
      { role: 'user', content: 'go' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'cold' },
    ];
    const body = toAnthropic(responses({ tools: [weatherTool], input, reasoning: { effort: 'medium' } }).canonical);
    expect(body).not.toHaveProperty('thinking');
    expect(body.output_config).toEqual({ effort: 'medium' });
  });

  it('an item_reference left at parse time is a 422 naming it', () => {
    expect(() => responses({ input: [{ type: 'item_reference', id: 'msg_9' }] })).toThrowError(DomainError);
    try {
      responses({ input: [{ role: 'user', content: 'a' }, { type: 'item_reference', id: 'msg_9' }] });
    } catch (error) {
      expect((error as DomainError).issues).toEqual([{ loc: ['input', 1, 'type'], msg: 'Unknown item: msg_9', type: 'value_error' }]);
    }
  });

  it('a mid-conversation developer item stays in place for chat and joins the system prompt for Anthropic', () => {
    const input = [{ role: 'user', content: 'a' }, { role: 'developer', content: 'be brief' }, { role: 'user', content: 'b' }];
    const { canonical } = responses({ input, instructions: 'base' });
    expect(toChat(canonical).messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'system', 'user']);
    expect(toAnthropic(canonical).system).toBe('base\n\nbe brief');
  });
});

describe('Chat request fields (translated for the Anthropic kind, passed through to chat upstreams)', () => {
  it('passes the client body straight through to a chat upstream (every field carried natively)', () => {
    const parsed = chat({ response_format: { type: 'json_object' }, logprobs: true, top_k: 5, service_tier: 'flex' });
    expect(openAiCompatible.native['openai-chat']!.body(parsed.raw, 'up')).toMatchObject({ model: 'up', response_format: { type: 'json_object' }, logprobs: true, top_k: 5, service_tier: 'flex' });
  });

  it('response_format json_schema -> output_config.format; json_object refused naming response_format', () => {
    const schema = chat({ response_format: { type: 'json_schema', json_schema: { name: 'c', schema: SCHEMA, strict: true } } }).canonical;
    expect(toAnthropic(schema).output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } });
    expect(refused(() => anthropic.check(chat({ response_format: { type: 'json_object' } }).canonical))).toEqual(['response_format']);
  });

  it('reasoning_effort -> output_config.effort + adaptive thinking; max_completion_tokens -> max_tokens; stop -> stop_sequences; user -> metadata.user_id', () => {
    const body = toAnthropic(chat({ reasoning_effort: 'low', max_completion_tokens: 77, stop: 'END', user: 'u-3' }).canonical);
    expect(body).toMatchObject({ max_tokens: 77, stop_sequences: ['END'], thinking: { type: 'adaptive' }, output_config: { effort: 'low' }, metadata: { user_id: 'u-3' } });
  });

  it('parallel_tool_calls and tool_choice allowed_tools on Anthropic; top_k (a vLLM-style extension) carried', () => {
    const tools = [{ type: 'function', function: { name: 'a', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'b', parameters: { type: 'object' } } }];
    const body = toAnthropic(chat({ tools, parallel_tool_calls: false, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'b' } }] } }, top_k: 4 }).canonical);
    expect(body).toMatchObject({ tools: [{ name: 'b' }], tool_choice: { type: 'auto', disable_parallel_tool_use: true }, top_k: 4 });
  });

  it('logprobs, top_logprobs, logit_bias, penalties, audio, legacy functions, file parts: refused naming each (neutral values pass)', () => {
    const parsed = chat({
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }],
      logprobs: true,
      top_logprobs: 2,
      logit_bias: { '50256': -100 },
      frequency_penalty: 0.5,
      presence_penalty: 0,
      modalities: ['text', 'audio'],
      functions: [{ name: 'f' }],
    });
    expect(refused(() => anthropic.check(parsed.canonical))).toEqual(['logprobs', 'top_logprobs', 'logit_bias', 'frequency_penalty', 'modalities', 'functions', 'messages.0.content.0.type']);
    expect(() => anthropic.check(chat({ logprobs: false, frequency_penalty: 0, presence_penalty: 0, logit_bias: {}, seed: 7 }).canonical)).not.toThrow();
  });

  it('web_search_options is a hosted tool: withheld and listed', () => {
    expect(chat({ web_search_options: {} }).withheldTools).toEqual(['web_search']);
  });
});

describe('Messages request fields (translated for chat upstreams, passed through to Anthropic)', () => {
  const claudeCode = {
    model: 'm',
    max_tokens: 32000,
    system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'fix it', cache_control: { type: 'ephemeral' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'look first', signature: 'sig-cc' },
          { type: 'redacted_thinking', data: 'opaque==' },
          { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'x' } },
          { type: 'web_search_tool_result', tool_use_id: 'srv_1', content: [] },
          { type: 'tool_use', id: 'tu_1', name: 'Read', input: { file_path: '/a' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'tu_1', content: [{ type: 'text', text: 'contents' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } }, { type: 'tool_reference', tool_name: 'Grep' }] },
        ],
      },
      { role: 'system', content: 'The user switched to plan mode.' },
      { role: 'user', content: 'go on' },
    ],
    tools: [
      { name: 'Read', description: 'Read a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } }, cache_control: { type: 'ephemeral' } },
      { name: 'Grep', input_schema: { type: 'object' }, defer_loading: true },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
    ],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    thinking: { type: 'adaptive' },
    output_config: { effort: 'medium' },
    context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
    metadata: { user_id: 'user_abc_account_1_session_2' },
    service_tier: 'auto',
    stream: true,
  };

  it('accepts Claude Code 2.1 requests whole; the body passed to Anthropic is the client body unchanged', () => {
    const parsed = parse('anthropic-messages', claudeCode);
    expect(parsed.raw).toBe(claudeCode);
    expect(anthropic.native['anthropic-messages']!.body(parsed.raw, 'up')).toEqual({ ...claudeCode, model: 'up' });
    expect(parsed.withheldTools).toEqual(['web_search_20250305']);
    expect(parsed.canonical.tools.map((t) => t.name)).toEqual(['Read', 'Grep']);
    expect(parsed.canonical.untranslatable).toEqual([]);
    expect(parsed.canonical.messages[1]!.parts.map((p) => p.type)).toEqual(['reasoning', 'reasoning', 'tool_call']);
  });

  it('for a chat upstream: effort -> reasoning_effort, system turn in place, tool images after the tool turn, user id, no parallel calls, no reasoning', () => {
    const body = toChat(parse('anthropic-messages', claudeCode).canonical);
    expect(body).toMatchObject({ reasoning_effort: 'medium', max_completion_tokens: 32000, user: 'user_abc_account_1_session_2', parallel_tool_calls: false, tool_choice: 'auto' });
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user', 'system', 'user']);
    expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'tu_1', content: 'contents' });
    expect(body.messages[4].content).toEqual([{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } }]);
    expect(JSON.stringify(body)).not.toContain('sig-cc');
    expect(JSON.stringify(body)).not.toContain('web_search');
  });

  it('thinking budgets -> chat reasoning_effort (low < 4096 <= medium < 16384 <= high); disabled and adaptive name none', () => {
    const effort = (thinking: object) => toChat(messages({ thinking }).canonical).reasoning_effort;
    expect(effort({ type: 'enabled', budget_tokens: 1024 })).toBe('low');
    expect(effort({ type: 'enabled', budget_tokens: 8000 })).toBe('medium');
    expect(effort({ type: 'enabled', budget_tokens: 16384 })).toBe('high');
    expect(effort({ type: 'disabled' })).toBeUndefined();
    expect(effort({ type: 'adaptive' })).toBeUndefined();
  });

  it('output_config.format (and the beta output_format) -> chat response_format json_schema; stop_sequences -> stop', () => {
    const expected = { type: 'json_schema', json_schema: { name: 'response', schema: SCHEMA, strict: true } };
    expect(toChat(messages({ output_config: { format: { type: 'json_schema', schema: SCHEMA } } }).canonical).response_format).toEqual(expected);
    expect(toChat(messages({ output_format: { type: 'json_schema', schema: SCHEMA } }).canonical).response_format).toEqual(expected);
    expect(toChat(messages({ stop_sequences: ['###'] }).canonical).stop).toEqual(['###']);
  });

  it('top_k, mcp_servers, container, documents: refused for chat upstreams naming each', () => {
    const parsed = messages({
      top_k: 5,
      mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }],
      container: 'cntr_1',
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } }] }],
    });
    expect(refused(() => openAiCompatible.check(parsed.canonical))).toEqual(['messages.0.content.0.type', 'mcp_servers', 'container', 'top_k']);
    // The same request to an Anthropic upstream goes as sent.
    expect(anthropic.native['anthropic-messages']!.body(parsed.raw, 'up')).toMatchObject({ top_k: 5, container: 'cntr_1' });
  });

  it('a server tool forced by tool_choice is a hosted choice (refused for chat upstreams)', () => {
    const parsed = messages({ tools: [{ type: 'web_search_20250305', name: 'web_search' }], tool_choice: { type: 'tool', name: 'web_search' } });
    expect(parsed.canonical.toolChoice).toEqual({ hosted: 'web_search_20250305' });
    expect(refused(() => openAiCompatible.check(parsed.canonical))).toEqual(['tool_choice']);
  });
});
