import { describe, expect, it } from 'vitest';
import { AFFINITY_PREFIX_CHARS, affinityKeyOf as keyOf, promptPrefix as prefixOf } from '../../src/inference/affinity-key.js';
import { CLIENT_FORMATS, type ClientFormatId } from '../../src/inference/client-formats.js';

/** The key of a body sent in the named client format (its affinity rule). */
const affinityKeyOf = (format: ClientFormatId, body: Record<string, unknown>, account: string) => keyOf(CLIENT_FORMATS[format].affinity, body, account);
const promptPrefix = (format: ClientFormatId, body: Record<string, unknown>) => prefixOf(CLIENT_FORMATS[format].affinity, body);

/** The affinity key of realistic request bodies of the three client formats. */

const ACCOUNT = 'acc_01JBAIKAL0000000000000001';
const OTHER = 'acc_01JBAIKAL0000000000000002';
/** A long system prompt, as coding agents send (~6 KB, ~1500 tokens). */
const SYSTEM = Array.from({ length: 120 }, (_, i) => `Rule ${i}: keep answers short, cite the file you changed and never invent an API.`).join('\n');
const OTHER_SYSTEM = SYSTEM.replace('Rule 3:', 'Rule three:');
const TOOLS_CHAT = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file of the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'run', description: 'Run a shell command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } },
];

const chat = (system: string, turns: string[], extra: Record<string, unknown> = {}) => ({
  model: 'gen-5.6-luna',
  messages: [{ role: 'system', content: system }, ...turns.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content }))],
  tools: TOOLS_CHAT,
  ...extra,
});

describe('affinityKeyOf: keys the client names', () => {
  it('prompt_cache_key (chat and Responses), scoped by the account', () => {
    const body = { ...chat('be brief', ['hi']), prompt_cache_key: 'conversation-42' };
    const key = affinityKeyOf('openai-chat', body, ACCOUNT);
    expect(key).toBe(`${ACCOUNT}\u0000cache\u0000conversation-42`);
    expect(affinityKeyOf('openai-chat', body, OTHER)).not.toBe(key);
    // Responses, as Codex sends it: the same name in the same account is the same key.
    expect(affinityKeyOf('openai-responses', { model: 'm', input: 'hi', prompt_cache_key: 'conversation-42' }, ACCOUNT)).toBe(key);
    // It wins over a long prefix.
    expect(affinityKeyOf('openai-chat', { ...chat(SYSTEM, ['hi']), prompt_cache_key: 'conversation-42' }, ACCOUNT)).toBe(key);
    // Empty or not a string: as if absent (short prompt: no key).
    expect(affinityKeyOf('openai-chat', { ...chat('be brief', ['hi']), prompt_cache_key: '' }, ACCOUNT)).toBeNull();
    expect(affinityKeyOf('openai-chat', { ...chat('be brief', ['hi']), prompt_cache_key: 42 }, ACCOUNT)).toBeNull();
  });

  it('metadata.user_id (Messages), as Claude Code sends one per session', () => {
    const userId = 'user_5e3b0c_account_2f9d0a7e-1111-4c3b-9a0e-000000000000_session_7c1e9b52-2222-4f3a-8d55-000000000000';
    const body = { model: 'lm-opus-5', max_tokens: 100, metadata: { user_id: userId }, messages: [{ role: 'user', content: 'hi' }] };
    expect(affinityKeyOf('anthropic-messages', body, ACCOUNT)).toBe(`${ACCOUNT}\u0000user\u0000${userId}`);
    expect(affinityKeyOf('anthropic-messages', body, OTHER)).toBe(`${OTHER}\u0000user\u0000${userId}`);
    // prompt_cache_key means nothing to Messages, and user_id nothing to chat.
    expect(affinityKeyOf('anthropic-messages', { ...body, metadata: {}, prompt_cache_key: 'x' }, ACCOUNT)).toBeNull();
    expect(affinityKeyOf('openai-chat', { ...chat('be brief', ['hi']), metadata: { user_id: 'u' } }, ACCOUNT)).toBeNull();
    expect(affinityKeyOf('anthropic-messages', { ...body, metadata: null }, ACCOUNT)).toBeNull();
  });

  it('a very long client key is hashed, still telling keys apart', () => {
    const long = 'k'.repeat(10_000);
    const a = affinityKeyOf('openai-chat', { prompt_cache_key: `${long}a` }, ACCOUNT)!;
    const b = affinityKeyOf('openai-chat', { prompt_cache_key: `${long}b` }, ACCOUNT)!;
    expect(a.length).toBeLessThan(80);
    expect(a).not.toBe(b);
    expect(affinityKeyOf('openai-chat', { prompt_cache_key: `${long}a` }, ACCOUNT)).toBe(a);
  });
});

describe('affinityKeyOf: the leading prefix of a long prompt', () => {
  it('chat: the same long system prompt and tools give one key across turns; another prompt, tools or account another', () => {
    const first = affinityKeyOf('openai-chat', chat(SYSTEM, ['Fix the failing test.']), ACCOUNT);
    expect(first).toMatch(new RegExp(`^${ACCOUNT}\u0000prefix\u0000[0-9a-f]{16}$`));
    const later = affinityKeyOf('openai-chat', chat(SYSTEM, ['Fix the failing test.', 'Done: I changed a.ts.', 'Now run the linter.']), ACCOUNT);
    expect(later).toBe(first);
    expect(affinityKeyOf('openai-chat', chat(SYSTEM, ['Another task entirely.']), ACCOUNT)).toBe(first); // the prefix is all system
    expect(affinityKeyOf('openai-chat', chat(OTHER_SYSTEM, ['Fix the failing test.']), ACCOUNT)).not.toBe(first);
    expect(affinityKeyOf('openai-chat', chat(SYSTEM, ['Fix the failing test.']), OTHER)).not.toBe(first);
    // Tools come before the turns and are read after a system prompt that fills the prefix: so here no change…
    expect(affinityKeyOf('openai-chat', chat(SYSTEM, ['Fix the failing test.'], { tools: TOOLS_CHAT.slice(1) }), ACCOUNT)).toBe(first);
    // …but with a short system prompt the tools are inside the prefix.
    const shortSystem = (tools: unknown[]) => affinityKeyOf('openai-chat', chat('You are a coding agent.', [SYSTEM], { tools }), ACCOUNT);
    expect(shortSystem(TOOLS_CHAT)).not.toBeNull();
    expect(shortSystem(TOOLS_CHAT.slice(1))).not.toBe(shortSystem(TOOLS_CHAT));
    // Other sampling fields never matter.
    expect(affinityKeyOf('openai-chat', chat(SYSTEM, ['Fix the failing test.'], { temperature: 0.2, stream: true, max_tokens: 10 }), ACCOUNT)).toBe(first);
  });

  it('chat: a string and text parts are the same content; images and the rest are prompt too', () => {
    const asString = chat(SYSTEM, ['Describe this.']);
    const asParts = { ...asString, messages: [{ role: 'system', content: [{ type: 'text', text: SYSTEM }] }, { role: 'user', content: [{ type: 'text', text: 'Describe this.' }] }] };
    expect(affinityKeyOf('openai-chat', asParts, ACCOUNT)).toBe(affinityKeyOf('openai-chat', asString, ACCOUNT));
    // A long conversation of short turns is long too: its opening turns key it.
    const turns = Array.from({ length: 80 }, (_, i) => `Turn ${i}: short message about lake Baikal.`);
    const many = affinityKeyOf('openai-chat', chat('be brief', turns), ACCOUNT);
    expect(many).not.toBeNull();
    expect(affinityKeyOf('openai-chat', chat('be brief', [...turns, 'one more']), ACCOUNT)).toBe(many);
    const image = (url: string) => ({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }, { type: 'text', text: 'what is it?' }] }] });
    const pixels = 'A'.repeat(8000);
    expect(affinityKeyOf('openai-chat', image(`data:image/png;base64,${pixels}`), ACCOUNT)).not.toBe(affinityKeyOf('openai-chat', image(`data:image/png;base64,B${pixels}`), ACCOUNT));
  });

  it('no key for a short prompt: under ~1024 tokens nothing is cached anyway', () => {
    expect(affinityKeyOf('openai-chat', chat('be brief', ['hi']), ACCOUNT)).toBeNull();
    expect(affinityKeyOf('openai-chat', { model: 'm', messages: [] }, ACCOUNT)).toBeNull();
    expect(affinityKeyOf('openai-chat', {}, ACCOUNT)).toBeNull();
    expect(affinityKeyOf('openai-responses', { model: 'm', input: 'hello' }, ACCOUNT)).toBeNull();
    expect(affinityKeyOf('anthropic-messages', { model: 'm', max_tokens: 5, system: 'short', messages: [{ role: 'user', content: 'hi' }] }, ACCOUNT)).toBeNull();
    // The threshold: the serialized prompt reaching AFFINITY_PREFIX_CHARS.
    const justUnder = 'x'.repeat(AFFINITY_PREFIX_CHARS - 40);
    expect(promptPrefix('openai-responses', { input: justUnder })).toBeNull();
    expect(promptPrefix('openai-responses', { input: justUnder + 'y'.repeat(40) })).toHaveLength(AFFINITY_PREFIX_CHARS);
  });

  it('Responses: instructions, tools, then input as a string or as items, the same prompt either way', () => {
    const tools = [{ type: 'function', name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } }];
    const asString = { model: 'gen-5.6-luna', instructions: SYSTEM, tools, input: 'Fix the failing test.' };
    const asItems = { ...asString, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test.' }] }] };
    const key = affinityKeyOf('openai-responses', asString, ACCOUNT);
    expect(key).not.toBeNull();
    expect(affinityKeyOf('openai-responses', asItems, ACCOUNT)).toBe(key);
    // A later turn with the model's output and a function call appended: same prefix.
    const later = {
      ...asItems,
      input: [
        ...asItems.input,
        { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'export const a = 1;' },
      ],
    };
    expect(affinityKeyOf('openai-responses', later, ACCOUNT)).toBe(key);
    expect(affinityKeyOf('openai-responses', { ...asString, instructions: OTHER_SYSTEM }, ACCOUNT)).not.toBe(key);
    // Short instructions, long input items: the items make it long.
    const longItems = { model: 'm', instructions: 'be brief', input: [{ role: 'user', content: [{ type: 'input_text', text: SYSTEM }] }] };
    expect(affinityKeyOf('openai-responses', longItems, ACCOUNT)).not.toBeNull();
  });

  it('Messages: system as a string or blocks, cache_control breakpoints moving between turns, all one key', () => {
    const tools = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];
    const turn1 = {
      model: 'lm-opus-5',
      max_tokens: 1024,
      system: SYSTEM,
      tools,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Fix the failing test.', cache_control: { type: 'ephemeral' } }] }],
    };
    const turn2 = {
      ...turn1,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      tools: [{ ...tools[0]!, cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'Fix the failing test.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'export const a = 1;', cache_control: { type: 'ephemeral' } }] },
      ],
    };
    const key = affinityKeyOf('anthropic-messages', turn1, ACCOUNT);
    expect(key).toMatch(/\u0000prefix\u0000/);
    expect(affinityKeyOf('anthropic-messages', turn2, ACCOUNT)).toBe(key);
    expect(affinityKeyOf('anthropic-messages', { ...turn1, system: OTHER_SYSTEM }, ACCOUNT)).not.toBe(key);
    // Short system, long first message: tools and an image inside the prefix, with or without breakpoints.
    const marked = { cache_control: { type: 'ephemeral' } };
    const opening = (mark: object) => ({
      ...turn1,
      system: 'short',
      tools: [{ ...tools[0]!, ...mark }],
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo' }, ...mark }, { type: 'text', text: SYSTEM }] }],
    });
    const opened = affinityKeyOf('anthropic-messages', opening({}), ACCOUNT);
    expect(opened).not.toBeNull();
    expect(affinityKeyOf('anthropic-messages', opening(marked), ACCOUNT)).toBe(opened);
    expect(affinityKeyOf('anthropic-messages', { ...opening({}), tools: [] }, ACCOUNT)).not.toBe(opened);
  });

  it('reads no further than the prefix, whatever the size of the body', () => {
    const trap = {
      get role(): string {
        throw new Error('read past the prefix');
      },
    };
    const huge = 'z'.repeat(25 * 1024 * 1024);
    const body = { model: 'm', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: huge }, trap] };
    const started = performance.now();
    const key = affinityKeyOf('openai-chat', body, ACCOUNT);
    const ms = performance.now() - started;
    expect(key).toBe(affinityKeyOf('openai-chat', chat(SYSTEM, ['other'], { tools: undefined }), ACCOUNT));
    const hugeFirst = { model: 'm', messages: [{ role: 'user', content: huge }, trap] };
    expect(promptPrefix('openai-chat', hugeFirst)).toHaveLength(AFFINITY_PREFIX_CHARS);
    expect(promptPrefix('openai-chat', { messages: [{ role: 'system', content: huge }, trap] })).toHaveLength(AFFINITY_PREFIX_CHARS);
    expect(promptPrefix('anthropic-messages', { system: huge, messages: [trap] })).toHaveLength(AFFINITY_PREFIX_CHARS);
    expect(promptPrefix('openai-responses', { instructions: huge, input: [trap] })).toHaveLength(AFFINITY_PREFIX_CHARS);
    console.log(`[affinity-key] a 25 MB chat body keyed in ${ms.toFixed(3)} ms`);
  });
});
