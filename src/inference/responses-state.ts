import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import type { ResponsesItem, ResponsesStore } from './responses-store.js';

/**
 * Responses state as OpenAI keeps it: a response created with `store` (the default) can be continued
 * with `previous_response_id` and its items named by `item_reference`. The pipeline expands both into
 * the full input BEFORE the request is parsed, so every upstream kind (translated or native) receives
 * a self-contained conversation and no upstream needs to keep state for us.
 */

/** What the pipeline needs of the store: keep a response, expand a chain, resolve item references. */
export type ResponsesStorage = Pick<ResponsesStore, 'save' | 'context' | 'items'>;

export interface PreparedResponsesRequest {
  /** The body with the stored conversation of `previous_response_id` and the `item_reference`s expanded into `input`. */
  body: unknown;
  /** Keeps the finished response (before its last bytes reach the client); null when `store` is false. */
  save: ((response: Record<string, unknown>) => Promise<void>) | null;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const invalid = (loc: (string | number)[], msg: string) => new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc, msg, type: 'value_error' }] });

/**
 * Expands a Responses request's references to stored state. Reads PostgreSQL only when the request
 * uses `previous_response_id` or `item_reference`; anything malformed is left for the parser to word.
 */
export async function prepareResponsesRequest(
  storage: ResponsesStorage,
  log: Logger,
  owner: { userId: string; keyId: string },
  body: unknown,
): Promise<PreparedResponsesRequest> {
  if (!isObject(body)) return { body, save: null };
  const previousId = body.previous_response_id ?? null;
  if (previousId !== null && typeof previousId !== 'string') throw invalid(['previous_response_id'], 'Input should be a valid string');
  const own: ResponsesItem[] =
    typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }] : Array.isArray(body.input) ? body.input : [];
  const referenced = own.flatMap((item, i) => (isObject(item) && item.type === 'item_reference' ? [{ i, id: item.id }] : []));
  for (const ref of referenced) if (typeof ref.id !== 'string' || !ref.id) throw invalid(['input', ref.i, 'id'], 'An item_reference needs the id of a stored item');

  const [context, found] = await Promise.all([
    previousId ? storage.context(owner.userId, previousId) : Promise.resolve([]),
    referenced.length ? storage.items(owner.userId, referenced.map((r) => r.id as string)) : Promise.resolve(new Map<string, ResponsesItem>()),
  ]);
  // Unknown, expired and other accounts' ids read the same: not found.
  if (context === null) {
    throw new DomainError('not_found', `Previous response with id ${JSON.stringify(previousId)} not found`, { reason: 'previous_response_not_found', issues: [{ loc: ['previous_response_id'], msg: 'No stored response has this id', type: 'not_found' }] });
  }
  const missing = referenced.find((ref) => !found.has(ref.id as string));
  if (missing) {
    throw new DomainError('not_found', `Item with id ${JSON.stringify(missing.id)} not found`, { reason: 'item_not_found', issues: [{ loc: ['input', missing.i, 'id'], msg: 'No stored item has this id', type: 'not_found' }] });
  }
  const input = own.map((item) => (isObject(item) && item.type === 'item_reference' ? found.get(item.id as string)! : item));
  // `previous_response_id` stays, for the answer to echo; no upstream is sent it (see the native leg).
  const expanded: Record<string, unknown> = { ...body, input: [...context, ...input] };

  const save =
    body.store === false
      ? null
      : async (response: Record<string, unknown>) => {
          try {
            await storage.save({
              id: String(response.id),
              userId: owner.userId,
              apiKeyId: owner.keyId,
              model: String(response.model),
              previousResponseId: previousId,
              input,
              output: Array.isArray(response.output) ? response.output : [],
              response,
            });
          } catch (error) {
            // The answer still goes out; only its later retrieval is lost, which the operator must hear about.
            log.error({ err: error, responseId: response.id }, 'could not store a response');
          }
        };
  return { body: expanded, save };
}
