/**
 * Every word the cabinet shows, in English and Russian. `ru` must have every key of `en` (the type says so).
 * `error.<reason or code>` entries translate the API's errors; others show the API's own message.
 */
import { adminEn, adminRu } from './strings-admin.js';
import { customerEn, customerRu } from './strings-customer.js';
import { operationsEn, operationsRu } from './strings-operations.js';
import { organizationsEn, organizationsRu } from './strings-organizations.js';
import { shellEn, shellRu } from './strings-shell.js';
import { webhooksEn, webhooksRu } from './strings-webhooks.js';

// One object per language, merged from the areas' files (no two areas share a key prefix, so none overrides another).
export const en = {
  ...operationsEn,
  ...shellEn,
  ...customerEn,
  ...adminEn,
  ...webhooksEn,
  ...organizationsEn,
} as const;

export type StringKey = keyof typeof en;

export const ru: Record<StringKey, string> = {
  ...operationsRu,
  ...shellRu,
  ...customerRu,
  ...adminRu,
  ...webhooksRu,
  ...organizationsRu,
};
