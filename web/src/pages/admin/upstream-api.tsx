import { graphql } from '../../gql/index.js';
import type { AdminTestUpstreamCredentialMutation, CabinetUpstreamFieldsFragment, ModelsQuery } from '../../gql/graphql.js';

/** The GraphQL operations of the admin Upstreams page and the shapes they answer. */
graphql(`
  fragment CabinetUpstreamFields on AdminUpstream {
    id
    kind
    baseUrl
    enabled
    active
    inactiveReason
    maxConcurrent
    nativeResponses
    fallback
    timeouts {
      connectMs
      firstByteMs
      idleMs
      keepAliveMs
    }
    health {
      windowSeconds
      minFailures
      failureRate
      cooldownSeconds
    }
    credentials {
      id
      routingId
      label
      source
      last4
      env
      enabled
      maxConcurrent
      usable
      problem
    }
    routes {
      id
      model
      group
      upstreamModel
      weight
      priority
      enabled
    }
    prices {
      model
      inputPer1m
      outputPer1m
      cacheReadPer1m
      cacheWritePer1m
      perImage
      perVideoSecond
    }
  }
`);
export const UpstreamListDocument = graphql(`
  query AdminUpstreamList {
    adminUpstreams {
      ...CabinetUpstreamFields
    }
  }
`);
export const CreateDocument = graphql(`
  mutation AdminCreateUpstream($input: CreateUpstreamInput!) {
    createUpstream(input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
export const UpdateDocument = graphql(`
  mutation AdminUpdateUpstream($id: ID!, $input: UpdateUpstreamInput!) {
    updateUpstream(id: $id, input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
export const SetEnabledDocument = graphql(`
  mutation AdminSetUpstreamEnabled($id: ID!, $enabled: Boolean!) {
    setUpstreamEnabled(id: $id, enabled: $enabled) {
      ...CabinetUpstreamFields
    }
  }
`);
export const DeleteDocument = graphql(`
  mutation AdminDeleteUpstream($id: ID!) {
    deleteUpstream(id: $id)
  }
`);
export const AddCredentialDocument = graphql(`
  mutation AdminAddUpstreamCredential($upstreamId: ID!, $input: UpstreamCredentialInput!) {
    addUpstreamCredential(upstreamId: $upstreamId, input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
export const UpdateCredentialDocument = graphql(`
  mutation AdminUpdateUpstreamCredential($id: ID!, $input: UpstreamCredentialInput!) {
    updateUpstreamCredential(id: $id, input: $input) {
      ...CabinetUpstreamFields
    }
  }
`);
export const DeleteCredentialDocument = graphql(`
  mutation AdminDeleteUpstreamCredential($id: ID!) {
    deleteUpstreamCredential(id: $id) {
      ...CabinetUpstreamFields
    }
  }
`);
export const SetRoutesDocument = graphql(`
  mutation AdminSetUpstreamRoutes($upstreamId: ID!, $routes: [UpstreamRouteInput!]!) {
    setUpstreamRoutes(upstreamId: $upstreamId, routes: $routes) {
      ...CabinetUpstreamFields
    }
  }
`);
export const SetPricesDocument = graphql(`
  mutation AdminSetUpstreamPrices($upstreamId: ID!, $prices: [UpstreamPriceInput!]!) {
    setUpstreamPrices(upstreamId: $upstreamId, prices: $prices) {
      ...CabinetUpstreamFields
    }
  }
`);
export const TestDocument = graphql(`
  mutation AdminTestUpstreamCredential($input: UpstreamTestInput!) {
    testUpstreamCredential(input: $input) {
      ok
      status
      latencyMs
      outcome
      model
    }
  }
`);

export type Upstream = CabinetUpstreamFieldsFragment;
export type CatalogModel = ModelsQuery['catalogModels'][number];
export type Credential = Upstream['credentials'][number];
export type UpstreamTestResult = AdminTestUpstreamCredentialMutation['testUpstreamCredential'];

export const KINDS = ['openai-compatible', 'anthropic', 'video-jobs'];
export const STATE_TONE = { closed: 'good', half_open: 'warn', open: 'bad', rate_limited: 'warn', auth_failed: 'bad' } as const;
export const OUTCOMES = ['ok', 'timeout', 'connection', 'rate_limited', 'server_error', 'rejected', 'misconfigured'];
