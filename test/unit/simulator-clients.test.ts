import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { schemaInPrompt, schemaInstance } from '../../src/simulator/schema-instance.js';

/**
 * The upstream simulator does what real clients ask of a provider (issue 21): structured output, the
 * Responses API with reasoning items, signed thinking blocks it verifies, forced tools, token counting.
 * Driven here with the official SDKs straight against the simulator, so the gateway's tests stand on a
 * faithful double.
 */

const KEY = 'sim-key';
let sim: Simulator;
let strict: Simulator;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  [sim, strict] = await Promise.all([startSimulator({ apiKey: KEY }), startSimulator({ apiKey: KEY, strictFields: true })]);
  openai = new OpenAI({ apiKey: KEY, baseURL: `${sim.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: null, baseURL: sim.url, defaultHeaders: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }, maxRetries: 0 });
});

afterAll(async () => {
  await Promise.all([sim?.close(), strict?.close()]);
});

const City = z.object({
  name: z.string(),
  population: z.number().int().min(1000),
  founded: z.string().datetime(),
  lakes: z.array(z.object({ name: z.string(), depthM: z.number().optional().nullable() })).min(2),
  kind: z.enum(['city', 'town']),
  tags: z.union([z.literal('cold'), z.literal('deep')]).array(),
});

describe('schema instances', () => {
  it('are valid for what zod emits (refs, unions, enums, bounds, formats, nullable)', () => {
    const Tree: z.ZodType<{ label: string; children: unknown[] }> = z.object({ label: z.string(), children: z.array(z.lazy(() => Tree)) });
    for (const schema of [City, Tree, z.object({ city: City, other: City })]) {
      expect(schema.safeParse(schemaInstance(z.toJSONSchema(schema))).success).toBe(true);
    }
  });

  it('finds a schema written into a prompt', () => {
    const prompt = `JSON schema:\n${JSON.stringify(z.toJSONSchema(City))}\nYou MUST answer with a JSON object that matches the JSON schema above.`;
    expect(City.safeParse(schemaInstance(schemaInPrompt(['Be brief.', prompt]))).success).toBe(true);
  });
});

describe('chat completions', () => {
  it('answers a json_schema response_format with JSON of the schema (parse, and streamed)', async () => {
    const parsed = await openai.chat.completions.parse({ model: 'm', messages: [{ role: 'user', content: 'A city' }], response_format: zodResponseFormat(City, 'city') });
    expect(City.parse(parsed.choices[0]!.message.parsed)).toBeTruthy();
    const stream = openai.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'A city' }], response_format: zodResponseFormat(City, 'city') });
    expect(City.parse((await stream.finalChatCompletion()).choices[0]!.message.parsed)).toBeTruthy();
  });

  it('reports reasoning tokens for reasoning_effort, calls a forced tool with schema-valid arguments', async () => {
    const reasoned = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi [sim:words=2]' }], reasoning_effort: 'medium' });
    expect(reasoned.usage!.completion_tokens_details!.reasoning_tokens).toBe(32);
    expect(reasoned.usage!.completion_tokens).toBe(2 + 32);
    const forced = await openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Pick a city' }],
      tools: [{ type: 'function', function: { name: 'save_city', parameters: z.toJSONSchema(City) as Record<string, unknown> } }],
      tool_choice: { type: 'function', function: { name: 'save_city' } },
    });
    const call = forced.choices[0]!.message.tool_calls![0]!;
    expect(call.type === 'function' && City.safeParse(JSON.parse(call.function.arguments)).success).toBe(true);
  });

  it('with strictFields, refuses a parameter chat completions does not document, as OpenAI does', async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: `${strict.url}/v1`, maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_output_tokens: 5 } as never)).rejects.toMatchObject({ status: 400, param: 'max_output_tokens' });
  });
});

describe('the Responses API', () => {
  it('streams reasoning, a hosted web search and text that the SDK accumulates into the final response', async () => {
    const stream = openai.responses.stream({ model: 'm', input: 'Search [sim:words=3]', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], tools: [{ type: 'web_search' }] });
    const final = await stream.finalResponse();
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'web_search_call', 'message']);
    expect(final.output_text).toBe('baikal is the');
    expect(final.usage!.output_tokens_details.reasoning_tokens).toBe(16);
    expect((final.output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toEqual(expect.any(String));
  });

  it('answers text.format with JSON of the schema (responses.parse), and function calls by directive', async () => {
    const parsed = await openai.responses.parse({ model: 'm', input: 'A city', text: { format: zodTextFormat(City, 'city') } });
    expect(City.parse(parsed.output_parsed)).toBeTruthy();
    const called = await openai.responses.create({ model: 'm', input: 'Weather? [sim:tool=get_weather]', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }] });
    expect(called.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: JSON.stringify({ city: 'Irkutsk', unit: 'celsius' }) });
  });

  it('keeps no state: previous_response_id and item_reference are refused (a gateway must send whole conversations)', async () => {
    await expect(openai.responses.create({ model: 'm', input: 'hi', previous_response_id: 'resp_1' })).rejects.toMatchObject({ status: 400, param: 'previous_response_id' });
    await expect(openai.responses.create({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] })).rejects.toMatchObject({ status: 400 });
  });
});

describe('the Messages API', () => {
  const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];

  it('signs its thinking, and refuses a tool loop whose thinking was dropped or altered', async () => {
    const question = { role: 'user' as const, content: 'Weather? [sim:tool=get_weather redacted-thinking]' };
    const first = await anthropic.messages.create({ model: 'm', max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 512 }, tools, messages: [question] });
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use']);
    const call = first.content.at(-1) as Anthropic.ToolUseBlock;
    const result = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: call.id, content: '-5 C' }] };
    const turn = (content: Anthropic.ContentBlockParam[]) =>
      anthropic.messages.create({ model: 'm', max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 512 }, tools, messages: [question, { role: 'assistant', content }, result] });

    expect((await turn(first.content as Anthropic.ContentBlockParam[])).stop_reason).toBe('end_turn');
    await expect(turn([call])).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Expected `thinking` or `redacted_thinking`') });
    const altered = { ...(first.content[0] as Anthropic.ThinkingBlock), thinking: 'something else' };
    await expect(turn([altered, call])).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Invalid `signature`') });
  });

  it('streams thinking and signature deltas the SDK accumulates', async () => {
    const final = await anthropic.messages.stream({ model: 'm', max_tokens: 1024, thinking: { type: 'adaptive' } as never, messages: [{ role: 'user', content: 'Think [sim:words=2]' }] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'thinking', thinking: expect.any(String), signature: expect.any(String) });
    expect(final.content[1]).toMatchObject({ type: 'text', text: 'baikal is' });
  });

  it('answers output_config json_schema with JSON, honours stop sequences, calls a forced tool, counts tokens', async () => {
    const structured = await anthropic.messages.create({ model: 'm', max_tokens: 256, messages: [{ role: 'user', content: 'A city' }], output_config: { format: { type: 'json_schema', schema: z.toJSONSchema(City) } } } as never);
    expect(City.safeParse(JSON.parse((structured.content[0] as Anthropic.TextBlock).text)).success).toBe(true);
    const stopped = await anthropic.messages.create({ model: 'm', max_tokens: 256, stop_sequences: ['deepest'], messages: [{ role: 'user', content: 'hi [sim:words=6]' }] });
    expect([stopped.stop_reason, stopped.stop_sequence, (stopped.content[0] as Anthropic.TextBlock).text]).toEqual(['stop_sequence', 'deepest', 'baikal is the']);
    const forced = await anthropic.messages.create({ model: 'm', max_tokens: 256, tools, tool_choice: { type: 'tool', name: 'get_weather' }, messages: [{ role: 'user', content: 'Weather' }] });
    expect(forced.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'city' } });
    const counted = await anthropic.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'one two three' }] });
    expect(counted.input_tokens).toBe(3 + 3);
  });
});
