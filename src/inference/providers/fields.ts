import { DomainError, type ValidationIssue } from '../../shared/errors.js';
import type { CanonicalRequest, CanonicalSource, CanonicalThinking, ReasoningEffort } from '../canonical.js';

/**
 * What translating providers share: naming a client's field in a refusal, and the one table of
 * reasoning-effort equivalences (docs/inference-fields.md describes both).
 */

/** Canonical settings -> the field each client format sent them in, for refusals that name the client's own field. */
const FIELD_NAMES: Record<'responseFormat' | 'toolChoice' | 'topK' | 'temperature', Record<CanonicalSource, string>> = {
  responseFormat: { 'openai-chat': 'response_format', 'openai-responses': 'text.format', 'anthropic-messages': 'output_config.format' },
  toolChoice: { 'openai-chat': 'tool_choice', 'openai-responses': 'tool_choice', 'anthropic-messages': 'tool_choice' },
  topK: { 'openai-chat': 'top_k', 'openai-responses': 'top_k', 'anthropic-messages': 'top_k' },
  temperature: { 'openai-chat': 'temperature', 'openai-responses': 'temperature', 'anthropic-messages': 'temperature' },
};

export function fieldLoc(request: CanonicalRequest, field: keyof typeof FIELD_NAMES): string[] {
  return FIELD_NAMES[field][request.source ?? 'openai-chat'].split('.');
}

/** Refuses a request whose fields this route cannot honour: 422 `validation_failed`, each issue at its field. */
export function refuseFields(issues: ValidationIssue[]): void {
  if (issues.length) throw new DomainError('validation_failed', `This model's route cannot honour ${issues.map((i) => i.loc.join('.')).join(', ')}`, { issues, reason: 'unsupported_field' });
}

/** The issues every translation raises: what the client's own format alone can carry, and hosted tools forced by tool_choice. */
export function commonIssues(request: CanonicalRequest): ValidationIssue[] {
  const issues = [...(request.untranslatable ?? [])];
  const choice = request.toolChoice;
  if (choice && typeof choice === 'object' && 'hosted' in choice) {
    issues.push({ loc: fieldLoc(request, 'toolChoice'), msg: `The hosted tool ${choice.hosted} is not available for this model`, type: 'value_error' });
  }
  return issues;
}

/**
 * Anthropic `thinking` budgets -> an OpenAI reasoning effort: under 4,096 tokens is low, under
 * 16,384 medium, more is high. Adaptive and disabled thinking name no effort (the upstream's default).
 */
export function effortOfThinking(thinking: CanonicalThinking | null | undefined): ReasoningEffort | null {
  if (thinking?.type !== 'enabled') return null;
  if (thinking.budgetTokens < 4_096) return 'low';
  if (thinking.budgetTokens < 16_384) return 'medium';
  return 'high';
}

/** The chat-completions `reasoning_effort` values: OpenAI's scale stops at `xhigh`. */
export function chatEffortOf(effort: ReasoningEffort): string {
  return effort === 'max' ? 'xhigh' : effort;
}

/** Anthropic `output_config.effort` values (low, medium, high, max); `none` means no thinking at all. */
export function anthropicEffortOf(effort: ReasoningEffort): 'low' | 'medium' | 'high' | 'max' | null {
  switch (effort) {
    case 'none':
      return null;
    case 'minimal':
    case 'low':
      return 'low';
    case 'medium':
      return 'medium';
    case 'high':
      return 'high';
    case 'xhigh':
    case 'max':
      return 'max';
  }
}
