import type { z } from 'zod';
import { createHash } from 'node:crypto';
import type { CanonicalTool, CanonicalToolChoice } from '../../canonical.js';
import type { customTool, functionTool, namespaceTool, ResponsesRequest, tool } from './schema.js';

/**
 * Responses tools in canonical form: function, custom and namespaced tools become canonical
 * functions (flat names for namespaced ones), any other type is a hosted tool, withheld.
 */

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** (namespace, name) -> the flat name upstreams know; the key of a call as the client names it. */
export type ToolNames = Map<string, string>;
export const toolKey = (namespace: string | null | undefined, name: string) => `${namespace ?? ''}\u0000${name}`;

/** A short stable hash, to keep a flattened name unique and within 64 characters. */
function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * The flat name of a namespaced tool: `<namespace>__<name>` when that is a valid, unused function
 * name; otherwise shortened with a hash of both (stable across turns, as the same tools come back).
 */
function flatName(namespace: string, name: string, taken: Set<string>): string {
  const plain = `${namespace}__${name}`;
  if (FUNCTION_NAME.test(plain) && !taken.has(plain)) return plain;
  const safe = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${safe(namespace).slice(0, 20)}__${safe(name).slice(0, 30)}_${shortHash(`${namespace}\u0000${name}`)}`;
}

/** A custom tool's free-text input as a function's one string parameter, its grammar (if any) described. */
function customParameters(tool: z.output<typeof customTool>): Record<string, unknown> {
  const format = tool.format;
  const grammar = format?.type === 'grammar' && format.definition ? `The input must match this ${format.syntax ?? ''} grammar:\n${format.definition}` : 'Free-form text input.';
  return { type: 'object', properties: { input: { type: 'string', description: grammar } }, required: ['input'], additionalProperties: false };
}

export function toolsOf(list: z.output<typeof tool>[]): { tools: CanonicalTool[]; withheld: string[]; names: ToolNames } {
  const tools: CanonicalTool[] = [];
  const withheld = new Set<string>();
  const names: ToolNames = new Map();
  // Plain names first, so a flattened name never takes one a plain tool has.
  const taken = new Set<string>(list.flatMap((t) => (t.type === 'function' || t.type === 'custom' ? [(t as { name: string }).name] : [])));
  const add = (t: z.output<typeof functionTool> | z.output<typeof customTool>, namespace: z.output<typeof namespaceTool> | null) => {
    const name = namespace ? flatName(namespace.name, t.name, taken) : t.name;
    taken.add(name);
    names.set(toolKey(namespace?.name, t.name), name);
    const custom = t.type === 'custom';
    const description = [namespace?.description, t.description].filter((d) => d).join('\n\n') || null;
    tools.push({
      name,
      description,
      parameters: custom ? customParameters(t) : ((t as z.output<typeof functionTool>).parameters ?? { type: 'object', properties: {} }),
      ...(!custom && typeof (t as z.output<typeof functionTool>).strict === 'boolean' ? { strict: (t as z.output<typeof functionTool>).strict! } : {}),
      ...(custom || namespace ? { origin: { name: t.name, namespace: namespace?.name ?? null, custom } } : {}),
    });
  };
  for (const t of list) {
    if (t.type === 'function' || t.type === 'custom') add(t as z.output<typeof functionTool>, null);
    else if (t.type === 'namespace') {
      const group = t as z.output<typeof namespaceTool>;
      for (const member of group.tools) if (member.type === 'function' || member.type === 'custom') add(member as z.output<typeof functionTool>, group);
    } else withheld.add(t.type);
  }
  return { tools, withheld: [...withheld], names };
}

export function toolChoiceOf(choice: ResponsesRequest['tool_choice'], names: ToolNames): CanonicalToolChoice | null {
  if (choice === undefined || choice === null) return null;
  if (typeof choice === 'string') return choice;
  const named = (c: Record<string, unknown>) => names.get(toolKey(c.namespace as string | undefined, String(c.name ?? ''))) ?? String(c.name ?? '');
  if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') return { name: named(choice) };
  if (choice.type === 'allowed_tools' && Array.isArray(choice.tools)) {
    const allowed = (choice.tools as Record<string, unknown>[]).filter((t) => t?.type === 'function' || t?.type === 'custom').map(named);
    return { allowed, mode: choice.mode === 'required' ? 'required' : 'auto' };
  }
  return { hosted: choice.type };
}
