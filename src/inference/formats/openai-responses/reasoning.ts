import type { z } from 'zod';
import type { ReasoningOpaque, ReasoningPart } from '../../canonical.js';
import type { reasoningItem } from './schema.js';

/** Prefix of the `encrypted_content` we give Anthropic thinking shown to a Responses client (our own, versioned). */
const OPAQUE_PREFIX = 'bk1.';

/**
 * Reasoning opaque data as `encrypted_content`. OpenAI's own passes unchanged; Anthropic's signed or
 * redacted thinking is packed under our prefix, so a Responses client that sends the reasoning item
 * back (Codex does, with `store: false`) gives an Anthropic upstream its signed thinking back.
 */
export function encryptedContentOf(part: ReasoningPart): string | null {
  const opaque = part.opaque;
  if (!opaque) return null;
  if (opaque.family === 'openai') return opaque.encryptedContent;
  const packed = 'signature' in opaque ? { t: part.text, s: opaque.signature } : { r: opaque.redactedData };
  return OPAQUE_PREFIX + Buffer.from(JSON.stringify(packed)).toString('base64url');
}

/** A reasoning item read back: its text, summary and opaque data (ours unpacked, anything else OpenAI's). */
export function reasoningPartOf(item: z.output<typeof reasoningItem>): ReasoningPart {
  const summary = (item.summary ?? []).map((s) => s.text);
  let textOut = (item.content ?? []).map((c) => c.text).join('');
  let opaque: ReasoningOpaque | null = null;
  const encrypted = item.encrypted_content;
  if (encrypted?.startsWith(OPAQUE_PREFIX)) {
    try {
      const packed = JSON.parse(Buffer.from(encrypted.slice(OPAQUE_PREFIX.length), 'base64url').toString('utf8')) as { t?: unknown; s?: unknown; r?: unknown };
      if (typeof packed.s === 'string') {
        opaque = { family: 'anthropic', signature: packed.s };
        // The signature covers the thinking text exactly as the model wrote it.
        if (typeof packed.t === 'string') textOut = packed.t;
      } else if (typeof packed.r === 'string') opaque = { family: 'anthropic', redactedData: packed.r };
    } catch {
      // Not ours after all (or damaged): nothing any upstream could verify.
    }
  } else if (encrypted) opaque = { family: 'openai', encryptedContent: encrypted };
  return { type: 'reasoning', text: textOut, summary: opaque?.family === 'anthropic' ? [] : summary, opaque };
}

