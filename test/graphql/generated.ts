/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type AccountLimitsInput = {
  /** Requests in flight across the account’s keys; null restores the baseline. */
  concurrencyLimit?: number | null | undefined;
  userId: string;
};

export type AdjustBalanceInput = {
  /** Signed USD amount, a decimal string. */
  amountUsd: string;
  /** Repeat the key to retry safely. */
  idempotencyKey?: string | null | undefined;
  reason: string;
  userId: string;
};

export type CreateKeyInput = {
  /** At most 128 characters. */
  label?: string | null | undefined;
  /** USD per calendar month (UTC), a decimal string. */
  monthlySpendCap?: string | null | undefined;
  /** Default: siberia. */
  pricingPlan?: string | null | undefined;
  /** Default: the first family of the catalog. */
  providerFamily?: string | null | undefined;
  /** Default: cheap. */
  routeGroup?: string | null | undefined;
};

export type KeyLimitsInput = {
  /** Concurrent requests; null restores the baseline. */
  concurrencyLimit?: number | null | undefined;
  keyId: string;
  /** USD per month; null removes the cap. */
  monthlySpendCap?: string | null | undefined;
  /** Requests per minute; null restores the baseline. */
  rpmLimit?: number | null | undefined;
};

export type LoginInput = {
  /** Username or e-mail. */
  login: string;
  password: string;
};

export type PricingPlanInput = {
  id: string;
  label: string;
  /** Multiplier on public prices, default 1. */
  multiplier?: string | null | undefined;
  /** Per-model prices, keyed by model id. */
  overrides?: Record<string, unknown> | null | undefined;
  public: boolean;
};

export type RegisterInput = {
  email: string;
  password: string;
  username: string;
};

/** closed: in use; open: taken out after failures (a probe after its cool-down); half_open: a probe may go; rate_limited: paused by the upstream’s retry-after; auth_failed: the upstream refused the credential (401/403). */
export type RouteHealthState =
  | 'auth_failed'
  | 'closed'
  | 'half_open'
  | 'open'
  | 'rate_limited';

export type SessionEventKind =
  | 'SIGNED_IN'
  | 'SIGNED_OUT';

export type TrustedPartnerInput = {
  creditLimitUsd: string;
  userId: string;
  validUntil: string;
};

export type UpstreamTestInput = {
  credentialId: string;
  /** A public model the upstream routes (default: its first route’s). */
  model?: string | null | undefined;
  upstreamId: string;
};

export type AccountFieldsFragment = { userId: string, username: string | null, email: string | null, emailVerified: boolean, balanceUsd: string, isAdmin: boolean };

export type RegisterMutationVariables = Exact<{
  input: RegisterInput;
}>;


export type RegisterMutation = { register: { sessionToken: string, expiresAt: string, account: { userId: string, username: string | null, email: string | null, emailVerified: boolean, balanceUsd: string, isAdmin: boolean } } };

export type LoginMutationVariables = Exact<{
  input: LoginInput;
}>;


export type LoginMutation = { login: { sessionToken: string, expiresAt: string, account: { userId: string, username: string | null, email: string | null, emailVerified: boolean, balanceUsd: string, isAdmin: boolean } } };

export type LogoutMutationVariables = Exact<{ [key: string]: never; }>;


export type LogoutMutation = { logout: boolean };

export type MeQueryVariables = Exact<{ [key: string]: never; }>;


export type MeQuery = { me: { userId: string, username: string | null, email: string | null, emailVerified: boolean, balanceUsd: string, isAdmin: boolean } };

export type AccountSummaryQueryVariables = Exact<{ [key: string]: never; }>;


export type AccountSummaryQuery = { accountSummary: { userId: string, email: string | null, balanceUsd: string, activeKeys: number, usageUsd: string, topupUsd: string } };

export type TransactionsQueryVariables = Exact<{
  limit?: number | null | undefined;
}>;


export type TransactionsQuery = { transactions: Array<{ id: string, userId: string, amountUsd: string, kind: string, apiKeyId: string | null, provider: string | null, model: string | null, promptTokens: number | null, completionTokens: number | null, createdAt: string }> };

export type SessionEventsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type SessionEventsSubscription = { sessionEvents: { kind: SessionEventKind, sessionId: string, at: string } };

export type AdjustBalanceMutationVariables = Exact<{
  input: AdjustBalanceInput;
}>;


export type AdjustBalanceMutation = { adjustBalance: { transactionId: string, amountUsd: string, applied: boolean } };

export type SetAccountLimitsMutationVariables = Exact<{
  input: AccountLimitsInput;
}>;


export type SetAccountLimitsMutation = { setAccountLimits: { userId: string, concurrencyLimit: number | null } };

export type SetKeyLimitsMutationVariables = Exact<{
  input: KeyLimitsInput;
}>;


export type SetKeyLimitsMutation = { setKeyLimits: { keyId: string, userId: string, rpmLimit: number | null, concurrencyLimit: number | null, monthlySpendCap: string | null } };

export type SetTrustedPartnerMutationVariables = Exact<{
  input: TrustedPartnerInput;
}>;


export type SetTrustedPartnerMutation = { setTrustedPartner: { userId: string, trustedPartnerUntil: string | null, creditLimitUsd: string } };

export type RevokeTrustedPartnerMutationVariables = Exact<{
  userId: string;
}>;


export type RevokeTrustedPartnerMutation = { revokeTrustedPartner: { userId: string, trustedPartnerUntil: string | null, creditLimitUsd: string } };

export type UpsertPricingPlanMutationVariables = Exact<{
  input: PricingPlanInput;
}>;


export type UpsertPricingPlanMutation = { upsertPricingPlan: { id: string, label: string, public: boolean, multiplier: string } };

export type SetModelPricesMutationVariables = Exact<{
  modelId: string;
  group: string;
  prices: Record<string, unknown>;
}>;


export type SetModelPricesMutation = { setModelPrices: { id: string, groups: Array<{ id: string, pricing: { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null } }> } };

export type UpsertCatalogModelMutationVariables = Exact<{
  model: Record<string, unknown>;
}>;


export type UpsertCatalogModelMutation = { upsertCatalogModel: { id: string, label: string } };

export type RemoveCatalogModelMutationVariables = Exact<{
  modelId: string;
}>;


export type RemoveCatalogModelMutation = { removeCatalogModel: boolean };

export type PricingFieldsFragment = { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null, usdPerGeneration: string | null, usdPerSecond: string | null };

export type CatalogModelFieldsFragment = { id: string, label: string, family: string, kind: string, endpoints: Array<string>, contextWindow: number | null, maxOutputTokens: number | null, video: Record<string, unknown> | null, capabilities: { tools: boolean, vision: boolean, streaming: boolean }, groups: Array<{ id: string, label: string, pricingPlan: string, pricing: { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null, usdPerGeneration: string | null, usdPerSecond: string | null } }>, official: { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null, usdPerGeneration: string | null, usdPerSecond: string | null } | null };

export type CatalogModelsQueryVariables = Exact<{ [key: string]: never; }>;


export type CatalogModelsQuery = { catalogModels: Array<{ id: string, label: string, family: string, kind: string, endpoints: Array<string>, contextWindow: number | null, maxOutputTokens: number | null, video: Record<string, unknown> | null, capabilities: { tools: boolean, vision: boolean, streaming: boolean }, groups: Array<{ id: string, label: string, pricingPlan: string, pricing: { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null, usdPerGeneration: string | null, usdPerSecond: string | null } }>, official: { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null, usdPerGeneration: string | null, usdPerSecond: string | null } | null }> };

export type MyCatalogModelsQueryVariables = Exact<{ [key: string]: never; }>;


export type MyCatalogModelsQuery = { myCatalogModels: Array<{ id: string, label: string, family: string, kind: string, endpoints: Array<string>, contextWindow: number | null, maxOutputTokens: number | null, video: Record<string, unknown> | null, capabilities: { tools: boolean, vision: boolean, streaming: boolean }, groups: Array<{ id: string, label: string, pricingPlan: string, pricing: { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null, usdPerGeneration: string | null, usdPerSecond: string | null } }>, official: { inputUsdPer1m: string | null, outputUsdPer1m: string | null, cacheReadUsdPer1m: string | null, cacheWriteUsdPer1m: string | null, usdPerGeneration: string | null, usdPerSecond: string | null } | null }> };

export type KeysQueryVariables = Exact<{ [key: string]: never; }>;


export type KeysQuery = { keys: Array<{ id: string, label: string | null, providerFamily: string, routeGroup: string, pricingPlan: string, monthlySpendCap: string | null, lastUsed: string | null, createdAt: string }> };

export type CreateKeyMutationVariables = Exact<{
  input?: CreateKeyInput | null | undefined;
}>;


export type CreateKeyMutation = { createKey: { id: string, key: string, label: string | null, providerFamily: string, routeGroup: string, pricingPlan: string, monthlySpendCap: string | null, createdAt: string } };

export type RevokeKeyMutationVariables = Exact<{
  id: string;
}>;


export type RevokeKeyMutation = { revokeKey: boolean };

export type AdminUpstreamHealthQueryVariables = Exact<{ [key: string]: never; }>;


export type AdminUpstreamHealthQuery = { adminUpstreamHealth: Array<{ upstreamId: string, credentialId: string, label: string, state: RouteHealthState, until: string | null, inFlight: number, lastFailureAt: string | null }> };

export type TestUpstreamCredentialMutationVariables = Exact<{
  input: UpstreamTestInput;
}>;


export type TestUpstreamCredentialMutation = { testUpstreamCredential: { ok: boolean, status: number | null, latencyMs: number, outcome: string, model: string | null } };

export type MarginRowFieldsFragment = { key: string, requests: number, revenueUsd: string, upstreamCostUsd: string, marginUsd: string, uncostedRequests: number, uncostedRevenueUsd: string };

export type AdminMarginQueryVariables = Exact<{
  from?: string | null | undefined;
  to?: string | null | undefined;
}>;


export type AdminMarginQuery = { adminMargin: { from: string, to: string, totals: { key: string, requests: number, revenueUsd: string, upstreamCostUsd: string, marginUsd: string, uncostedRequests: number, uncostedRevenueUsd: string }, byDay: Array<{ key: string, requests: number, revenueUsd: string, upstreamCostUsd: string, marginUsd: string, uncostedRequests: number, uncostedRevenueUsd: string }>, byModel: Array<{ key: string, requests: number, revenueUsd: string, upstreamCostUsd: string, marginUsd: string, uncostedRequests: number, uncostedRevenueUsd: string }>, byGroup: Array<{ key: string, requests: number, revenueUsd: string, upstreamCostUsd: string, marginUsd: string, uncostedRequests: number, uncostedRevenueUsd: string }>, byUpstream: Array<{ key: string, requests: number, revenueUsd: string, upstreamCostUsd: string, marginUsd: string, uncostedRequests: number, uncostedRevenueUsd: string }> } };

export type AdminUpstreamUsageQueryVariables = Exact<{
  from?: string | null | undefined;
  to?: string | null | undefined;
  upstreamId?: string | null | undefined;
}>;


export type AdminUpstreamUsageQuery = { adminUpstreamUsage: Array<{ upstreamId: string, model: string, requests: number, inputTokens: number, cacheReadTokens: number, cacheWriteTokens: number, outputTokens: number, images: number, costUsd: string, uncostedRequests: number }> };

export const AccountFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AccountFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Account"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"emailVerified"}},{"kind":"Field","name":{"kind":"Name","value":"balanceUsd"}},{"kind":"Field","name":{"kind":"Name","value":"isAdmin"}}]}}]} as unknown as DocumentNode<AccountFieldsFragment, unknown>;
export const PricingFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"PricingFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Pricing"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"inputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"outputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheReadUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheWriteUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerGeneration"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerSecond"}}]}}]} as unknown as DocumentNode<PricingFieldsFragment, unknown>;
export const CatalogModelFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"CatalogModelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CatalogModel"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"family"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"endpoints"}},{"kind":"Field","name":{"kind":"Name","value":"capabilities"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tools"}},{"kind":"Field","name":{"kind":"Name","value":"vision"}},{"kind":"Field","name":{"kind":"Name","value":"streaming"}}]}},{"kind":"Field","name":{"kind":"Name","value":"contextWindow"}},{"kind":"Field","name":{"kind":"Name","value":"maxOutputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"groups"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"pricingPlan"}},{"kind":"Field","name":{"kind":"Name","value":"pricing"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"PricingFields"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"official"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"PricingFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"video"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"PricingFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Pricing"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"inputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"outputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheReadUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheWriteUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerGeneration"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerSecond"}}]}}]} as unknown as DocumentNode<CatalogModelFieldsFragment, unknown>;
export const MarginRowFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"MarginRowFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MarginRow"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"requests"}},{"kind":"Field","name":{"kind":"Name","value":"revenueUsd"}},{"kind":"Field","name":{"kind":"Name","value":"upstreamCostUsd"}},{"kind":"Field","name":{"kind":"Name","value":"marginUsd"}},{"kind":"Field","name":{"kind":"Name","value":"uncostedRequests"}},{"kind":"Field","name":{"kind":"Name","value":"uncostedRevenueUsd"}}]}}]} as unknown as DocumentNode<MarginRowFieldsFragment, unknown>;
export const RegisterDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"Register"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RegisterInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"register"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sessionToken"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}},{"kind":"Field","name":{"kind":"Name","value":"account"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AccountFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AccountFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Account"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"emailVerified"}},{"kind":"Field","name":{"kind":"Name","value":"balanceUsd"}},{"kind":"Field","name":{"kind":"Name","value":"isAdmin"}}]}}]} as unknown as DocumentNode<RegisterMutation, RegisterMutationVariables>;
export const LoginDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"Login"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"LoginInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"login"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sessionToken"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}},{"kind":"Field","name":{"kind":"Name","value":"account"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AccountFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AccountFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Account"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"emailVerified"}},{"kind":"Field","name":{"kind":"Name","value":"balanceUsd"}},{"kind":"Field","name":{"kind":"Name","value":"isAdmin"}}]}}]} as unknown as DocumentNode<LoginMutation, LoginMutationVariables>;
export const LogoutDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"Logout"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"logout"}}]}}]} as unknown as DocumentNode<LogoutMutation, LogoutMutationVariables>;
export const MeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AccountFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AccountFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Account"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"emailVerified"}},{"kind":"Field","name":{"kind":"Name","value":"balanceUsd"}},{"kind":"Field","name":{"kind":"Name","value":"isAdmin"}}]}}]} as unknown as DocumentNode<MeQuery, MeQueryVariables>;
export const AccountSummaryDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AccountSummary"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"accountSummary"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"balanceUsd"}},{"kind":"Field","name":{"kind":"Name","value":"activeKeys"}},{"kind":"Field","name":{"kind":"Name","value":"usageUsd"}},{"kind":"Field","name":{"kind":"Name","value":"topupUsd"}}]}}]}}]} as unknown as DocumentNode<AccountSummaryQuery, AccountSummaryQueryVariables>;
export const TransactionsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Transactions"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"transactions"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"amountUsd"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"apiKeyId"}},{"kind":"Field","name":{"kind":"Name","value":"provider"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"promptTokens"}},{"kind":"Field","name":{"kind":"Name","value":"completionTokens"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<TransactionsQuery, TransactionsQueryVariables>;
export const SessionEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"SessionEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sessionEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"sessionId"}},{"kind":"Field","name":{"kind":"Name","value":"at"}}]}}]}}]} as unknown as DocumentNode<SessionEventsSubscription, SessionEventsSubscriptionVariables>;
export const AdjustBalanceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdjustBalance"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AdjustBalanceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"adjustBalance"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"transactionId"}},{"kind":"Field","name":{"kind":"Name","value":"amountUsd"}},{"kind":"Field","name":{"kind":"Name","value":"applied"}}]}}]}}]} as unknown as DocumentNode<AdjustBalanceMutation, AdjustBalanceMutationVariables>;
export const SetAccountLimitsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetAccountLimits"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AccountLimitsInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setAccountLimits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"concurrencyLimit"}}]}}]}}]} as unknown as DocumentNode<SetAccountLimitsMutation, SetAccountLimitsMutationVariables>;
export const SetKeyLimitsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetKeyLimits"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"KeyLimitsInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setKeyLimits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"keyId"}},{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"rpmLimit"}},{"kind":"Field","name":{"kind":"Name","value":"concurrencyLimit"}},{"kind":"Field","name":{"kind":"Name","value":"monthlySpendCap"}}]}}]}}]} as unknown as DocumentNode<SetKeyLimitsMutation, SetKeyLimitsMutationVariables>;
export const SetTrustedPartnerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetTrustedPartner"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"TrustedPartnerInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setTrustedPartner"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"trustedPartnerUntil"}},{"kind":"Field","name":{"kind":"Name","value":"creditLimitUsd"}}]}}]}}]} as unknown as DocumentNode<SetTrustedPartnerMutation, SetTrustedPartnerMutationVariables>;
export const RevokeTrustedPartnerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RevokeTrustedPartner"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"userId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"revokeTrustedPartner"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"userId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"userId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"trustedPartnerUntil"}},{"kind":"Field","name":{"kind":"Name","value":"creditLimitUsd"}}]}}]}}]} as unknown as DocumentNode<RevokeTrustedPartnerMutation, RevokeTrustedPartnerMutationVariables>;
export const UpsertPricingPlanDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpsertPricingPlan"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PricingPlanInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"upsertPricingPlan"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"public"}},{"kind":"Field","name":{"kind":"Name","value":"multiplier"}}]}}]}}]} as unknown as DocumentNode<UpsertPricingPlanMutation, UpsertPricingPlanMutationVariables>;
export const SetModelPricesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetModelPrices"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"modelId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"group"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"prices"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JSONObject"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setModelPrices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"modelId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"modelId"}}},{"kind":"Argument","name":{"kind":"Name","value":"group"},"value":{"kind":"Variable","name":{"kind":"Name","value":"group"}}},{"kind":"Argument","name":{"kind":"Name","value":"prices"},"value":{"kind":"Variable","name":{"kind":"Name","value":"prices"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"groups"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"pricing"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"inputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"outputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheReadUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheWriteUsdPer1m"}}]}}]}}]}}]}}]} as unknown as DocumentNode<SetModelPricesMutation, SetModelPricesMutationVariables>;
export const UpsertCatalogModelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpsertCatalogModel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"model"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JSONObject"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"upsertCatalogModel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"model"},"value":{"kind":"Variable","name":{"kind":"Name","value":"model"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}}]}}]}}]} as unknown as DocumentNode<UpsertCatalogModelMutation, UpsertCatalogModelMutationVariables>;
export const RemoveCatalogModelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RemoveCatalogModel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"modelId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"removeCatalogModel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"modelId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"modelId"}}}]}]}}]} as unknown as DocumentNode<RemoveCatalogModelMutation, RemoveCatalogModelMutationVariables>;
export const CatalogModelsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CatalogModels"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"catalogModels"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"CatalogModelFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"PricingFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Pricing"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"inputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"outputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheReadUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheWriteUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerGeneration"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerSecond"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"CatalogModelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CatalogModel"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"family"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"endpoints"}},{"kind":"Field","name":{"kind":"Name","value":"capabilities"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tools"}},{"kind":"Field","name":{"kind":"Name","value":"vision"}},{"kind":"Field","name":{"kind":"Name","value":"streaming"}}]}},{"kind":"Field","name":{"kind":"Name","value":"contextWindow"}},{"kind":"Field","name":{"kind":"Name","value":"maxOutputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"groups"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"pricingPlan"}},{"kind":"Field","name":{"kind":"Name","value":"pricing"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"PricingFields"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"official"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"PricingFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"video"}}]}}]} as unknown as DocumentNode<CatalogModelsQuery, CatalogModelsQueryVariables>;
export const MyCatalogModelsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"MyCatalogModels"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"myCatalogModels"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"CatalogModelFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"PricingFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Pricing"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"inputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"outputUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheReadUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"cacheWriteUsdPer1m"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerGeneration"}},{"kind":"Field","name":{"kind":"Name","value":"usdPerSecond"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"CatalogModelFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CatalogModel"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"family"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"endpoints"}},{"kind":"Field","name":{"kind":"Name","value":"capabilities"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tools"}},{"kind":"Field","name":{"kind":"Name","value":"vision"}},{"kind":"Field","name":{"kind":"Name","value":"streaming"}}]}},{"kind":"Field","name":{"kind":"Name","value":"contextWindow"}},{"kind":"Field","name":{"kind":"Name","value":"maxOutputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"groups"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"pricingPlan"}},{"kind":"Field","name":{"kind":"Name","value":"pricing"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"PricingFields"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"official"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"PricingFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"video"}}]}}]} as unknown as DocumentNode<MyCatalogModelsQuery, MyCatalogModelsQueryVariables>;
export const KeysDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Keys"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"keys"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"providerFamily"}},{"kind":"Field","name":{"kind":"Name","value":"routeGroup"}},{"kind":"Field","name":{"kind":"Name","value":"pricingPlan"}},{"kind":"Field","name":{"kind":"Name","value":"monthlySpendCap"}},{"kind":"Field","name":{"kind":"Name","value":"lastUsed"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<KeysQuery, KeysQueryVariables>;
export const CreateKeyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateKey"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateKeyInput"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createKey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"providerFamily"}},{"kind":"Field","name":{"kind":"Name","value":"routeGroup"}},{"kind":"Field","name":{"kind":"Name","value":"pricingPlan"}},{"kind":"Field","name":{"kind":"Name","value":"monthlySpendCap"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<CreateKeyMutation, CreateKeyMutationVariables>;
export const RevokeKeyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RevokeKey"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"revokeKey"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}]}]}}]} as unknown as DocumentNode<RevokeKeyMutation, RevokeKeyMutationVariables>;
export const AdminUpstreamHealthDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminUpstreamHealth"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"adminUpstreamHealth"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"upstreamId"}},{"kind":"Field","name":{"kind":"Name","value":"credentialId"}},{"kind":"Field","name":{"kind":"Name","value":"label"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"until"}},{"kind":"Field","name":{"kind":"Name","value":"inFlight"}},{"kind":"Field","name":{"kind":"Name","value":"lastFailureAt"}}]}}]}}]} as unknown as DocumentNode<AdminUpstreamHealthQuery, AdminUpstreamHealthQueryVariables>;
export const TestUpstreamCredentialDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestUpstreamCredential"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpstreamTestInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"testUpstreamCredential"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ok"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"latencyMs"}},{"kind":"Field","name":{"kind":"Name","value":"outcome"}},{"kind":"Field","name":{"kind":"Name","value":"model"}}]}}]}}]} as unknown as DocumentNode<TestUpstreamCredentialMutation, TestUpstreamCredentialMutationVariables>;
export const AdminMarginDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminMargin"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTimeISO"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTimeISO"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"adminMargin"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"totals"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"MarginRowFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"byDay"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"MarginRowFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"byModel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"MarginRowFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"byGroup"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"MarginRowFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"byUpstream"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"MarginRowFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"MarginRowFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MarginRow"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"requests"}},{"kind":"Field","name":{"kind":"Name","value":"revenueUsd"}},{"kind":"Field","name":{"kind":"Name","value":"upstreamCostUsd"}},{"kind":"Field","name":{"kind":"Name","value":"marginUsd"}},{"kind":"Field","name":{"kind":"Name","value":"uncostedRequests"}},{"kind":"Field","name":{"kind":"Name","value":"uncostedRevenueUsd"}}]}}]} as unknown as DocumentNode<AdminMarginQuery, AdminMarginQueryVariables>;
export const AdminUpstreamUsageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminUpstreamUsage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTimeISO"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTimeISO"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"upstreamId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"adminUpstreamUsage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"upstreamId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"upstreamId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"upstreamId"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"requests"}},{"kind":"Field","name":{"kind":"Name","value":"inputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"cacheReadTokens"}},{"kind":"Field","name":{"kind":"Name","value":"cacheWriteTokens"}},{"kind":"Field","name":{"kind":"Name","value":"outputTokens"}},{"kind":"Field","name":{"kind":"Name","value":"images"}},{"kind":"Field","name":{"kind":"Name","value":"costUsd"}},{"kind":"Field","name":{"kind":"Name","value":"uncostedRequests"}}]}}]}}]} as unknown as DocumentNode<AdminUpstreamUsageQuery, AdminUpstreamUsageQueryVariables>;