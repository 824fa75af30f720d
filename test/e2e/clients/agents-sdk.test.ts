import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { billedInCabinet, startDemoGateway, type ClientsGateway } from '../../helpers/clients-gateway.js';

/**
 * The OpenAI Agents SDK 0.20.0 over the Responses API against the built gateway in demo mode: an agent
 * with a function tool (the SDK runs the tool and sends its output back), then a second turn of the same
 * conversation by `previousResponseId`, which the gateway serves from its own store.
 */

let demo: ClientsGateway;

beforeAll(async () => {
  demo = await startDemoGateway();
  setTracingDisabled(true); // tracing exports to the vendor; there is no network here
  setDefaultOpenAIClient(new OpenAI({ apiKey: demo.keys.family_a, baseURL: `${demo.url}/v1`, fetch: demo.fetch, maxRetries: 0 }));
  setOpenAIAPI('responses');
});

afterAll(async () => {
  await demo?.close();
});

describe('@openai/agents 0.20.0 over /v1/responses', () => {
  it('runs an agent with a function tool, then continues the conversation by previousResponseId; every turn billed', async () => {
    const cities: string[] = [];
    const weather = tool({
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        cities.push(city);
        return `-5 C in ${city}`;
      },
    });
    const agent = new Agent({ name: 'lake guide', instructions: 'Be brief.', model: 'gen-5.6-luna', tools: [weather] });

    const from = demo.calls.length;
    const first = await run(agent, 'Weather in Irkutsk? [sim:tool=get_weather]');
    expect(cities).toEqual(['Irkutsk']);
    expect(first.finalOutput).toBe('baikal is the deepest lake on earth and');
    expect(first.lastResponseId).toMatch(/^resp_/);

    const second = await run(agent, 'And tomorrow? [sim:words=2]', { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe('baikal is');
    // The second turn carried only the new input and the id: the gateway's store supplied the rest.
    const lastCall = demo.calls.filter((c) => c.path === '/v1/responses').at(-1)!;
    expect(JSON.parse(lastCall.body!)).toMatchObject({ previous_response_id: first.lastResponseId });

    const turns = demo.calls.slice(from).filter((c) => c.path === '/v1/responses');
    expect(turns.map((c) => c.status)).toEqual([200, 200, 200]);
    for (const call of turns) expect(Number((await billedInCabinet(demo, call.requestId!)).amount_usd)).toBeGreaterThan(0);
  }, 60_000);
});
