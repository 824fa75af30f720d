import { DomainError, type ValidationIssue } from '../../shared/errors.js';
import type { CanonicalRequest, CanonicalThinking, ClientFieldNames, ReasoningEffort } from '../canonical.js';

/**
 * What translating providers share: naming a client's field in a refusal, and the one table of
 * reasoning-effort equivalences (docs/inference-fields.md describes both).
 */

/** The names of a request that says none (built by hand: tests, probes): chat completions'. */
const DEFAULT_FIELD_NAMES: ClientFieldNames = { responseFormat: 'response_format', toolChoice: 'tool_choice', topK: 'top_k', temperature: 'temperature' };

/** Where the client sent a canonical setting, for a refusal that names the client's own field. */
export function fieldLoc(request: CanonicalRequest, field: keyof ClientFieldNames): string[] {
  return (request.fieldNames ?? DEFAULT_FIELD_NAMES)[field].split('.');
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
