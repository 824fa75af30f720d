import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AccountsService } from './accounts/accounts.service.js';
import { BillingService } from './billing/billing.service.js';
import { Wallets, type WalletStore } from './billing/wallets.js';
import { SharedWallets } from './billing/shared-wallets.js';
import { CatalogService } from './catalog/catalog.service.js';
import { InferenceService } from './inference/inference.service.js';
import { CountTokensService } from './inference/count-tokens.js';
import { DEFAULT_LIMITS, Limiter, type LimitBaselines, type RequestLimiter } from './inference/limits.js';
import { SharedLimiter } from './inference/shared-limits.js';
import { RouteTable } from './upstreams/routes.js';
import { UpstreamHealth } from './upstreams/health.js';
import { UpstreamClient } from './upstreams/client.js';
import { CredentialRedactor } from './upstreams/redactor.js';
import { UpstreamsService } from './upstreams/upstreams.service.js';
import { KeysService } from './keys/keys.service.js';
import { KeyStatusService } from './accounts/key-status.js';
import type { Config } from './config.js';
import type { AnalyticsReads } from './shared/analytics-reads.js';
import type { Clock } from './shared/clock.js';
import type { Logger } from './shared/logging.js';
import { enqueueWebhookEvent } from './events/outbox.js';
import { AccountEventHub, type AccountEvent } from './events/account-event-hub.js';
import { LimitRefusals } from './events/limit-refusals.js';
import { BalanceEvents } from './billing/balance-events.js';
import { announceUsage } from './usage/usage-announcer.js';
import { ADMIN_TOPIC, Topics, type PubSub } from './shared/pubsub.js';
import type { SharedState } from './shared/redis.js';
import type { Tracing } from './shared/tracing.js';
import { keyIdOfRecord, UsageRecorder, type CommittedBatch } from './usage/usage-recorder.js';
import { UsagePartitions } from './usage/usage-partitions.js';
import { Metrics } from './metrics.js';
import { LocalVideoStorage } from './storage/video-storage.js';
import { VideoService } from './video/video.service.js';
import { AnalyticsService } from './usage/analytics.service.js';
import { MarginService } from './usage/margin.service.js';
import { UpstreamOps } from './upstreams/upstream-ops.js';
import { StatusService } from './status/status.service.js';
import { AnnouncementsService } from './announcements/announcements.service.js';
import { PaymentsService } from './payments/payments.service.js';
import { IdentityService } from './accounts/identity.service.js';
import { AdminAccountsService } from './accounts/admin-accounts.js';
import { ResponsesStore } from './inference/responses-store.js';
import { AlertsService } from './events/alerts/alerts.service.js';
import { withAlertEvents } from './events/alerts/alert-sources.js';
import { WebhooksService } from './events/webhooks/webhooks.service.js';
import { OrganizationsService } from './organizations/organizations.service.js';
import { OrganizationUsageService } from './usage/organization-usage.js';

/** The domain services, one instance each per process, shared by every transport. */
export interface Services {
  accounts: AccountsService;
  identity: IdentityService;
  /** The cabinet's operator views of accounts (search, keys, ending sessions). */
  adminAccounts: AdminAccountsService;
  catalog: CatalogService;
  keys: KeysService;
  billing: BillingService;
  wallets: WalletStore;
  limiter: RequestLimiter;
  usage: UsageRecorder;
  /** usage_events' monthly partitions: made ahead, dropped past USAGE_RETENTION_MONTHS (src/server.ts runs it hourly). */
  usagePartitions: UsagePartitions;
  upstreams: UpstreamClient;
  /** What routing has learned of each upstream credential (breakers, pauses, in flight). */
  health: UpstreamHealth;
  routes: RouteTable;
  /** Upstreams managed live by admins (stored in PostgreSQL, seeded from the operator file), and their registry. */
  managedUpstreams: UpstreamsService;
  inference: InferenceService;
  /** `GET /v1/me`. */
  keyStatus: KeyStatusService;
  /** Anthropic's token counting (POST /v1/messages/count_tokens): unbilled, forwarded or estimated. */
  countTokens: CountTokensService;
  video: VideoService;
  analytics: AnalyticsService;
  /** The operator's revenue, upstream cost and margin; upstreams' usage as their invoices show it. */
  margin: MarginService;
  /** Routing's live state per credential, and the test action (admins). */
  upstreamOps: UpstreamOps;
  status: StatusService;
  announcements: AnnouncementsService;
  payments: PaymentsService;
  /** Stored Responses (`store: true` on /v1/responses), per account, with expiry. */
  responses: ResponsesStore;
  /** Outbound webhooks: endpoints, the delivery log and the delivery worker. */
  webhooks: WebhooksService;
  metrics: Metrics;
  /** Account events (balance, usage, keys) from committed changes, to subscribers in every process. */
  events: AccountEventHub;
  /** Balance events' figures, and an account's balances now (a balance subscription's first event). */
  balanceEvents: BalanceEvents;
  /** Alerts the customer sets, evaluated after this process's committed changes. */
  alerts: AlertsService;
  /** Organizations: members, roles, invitations and their keys (the wallet is the organization's own ledger owner row). */
  organizations: OrganizationsService;
  /** An organization's wallet balance, usage by member and key, and monthly statements (the caller's access checked first). */
  organizationUsage: OrganizationUsageService;
}

export interface ServiceDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  pubsub: PubSub;
  log: Logger;
  /** Set with REDIS_URL: limits, cache invalidation and events shared with the other gateway processes. */
  shared?: SharedState;
  /** OpenTelemetry traces of the /v1 pipeline (absent: off). */
  tracing?: Tracing;
  /** Where the analytics (usage, leaderboard, margin) read: DATABASE_READ_URL's replica; absent: `orm`, the primary. */
  reads?: AnalyticsReads;
}

export function createServices(deps: ServiceDeps): Services {
  const catalog = new CatalogService({ ...deps, catalogFile: deps.config.catalogFile });
  const identity = new IdentityService({
    ...deps,
    settings: { mail: deps.config.mail, messenger: deps.config.messenger, loginThrottle: deps.config.loginThrottle, brandName: deps.config.operator.brand.name },
  });
  const accounts = new AccountsService({
    ...deps,
    identity,
    settings: { session: deps.config.session, loginThrottle: deps.config.loginThrottle, registerThrottle: deps.config.registerThrottle },
  });
  const baselines = { ...DEFAULT_LIMITS, windowMs: deps.config.rateWindowMs, concurrentPerAccount: deps.config.accountConcurrencyLimit };
  const { wallets, limiter } = admissionStores(deps, baselines);
  const health = new UpstreamHealth({ log: deps.log, publish: deps.shared ? (change) => void deps.shared!.publish({ type: 'upstream-health', change }) : undefined });
  const metrics = createMetrics(deps, { health, wallets, limiter });
  const { events, balanceEvents, refusals, committed } = accountEvents(deps, wallets);
  const usage = new UsageRecorder({ ...deps, metrics, flushMs: deps.config.usageFlushMs, committed });
  const upstreams = new UpstreamClient(CredentialRedactor.forUpstreams(deps.config.upstreams));
  const routes = new RouteTable(deps.config.upstreams, health);
  // Admins watch routing live: what this process learned goes to their subscriptions (shared through Redis).
  health.onChange((change, local) => {
    if (local) deps.pubsub.publish(Topics.UpstreamHealthChanged, ADMIN_TOPIC, { upstreamId: change.upstreamId, credentialId: change.credentialId, state: change.state, until: change.until ? new Date(change.until) : null, at: new Date() });
  });
  const billing = new BillingService({ ...deps, wallets, announce: (rows) => balanceEvents.announce(rows) });
  const keys = new KeysService({ ...deps, settings: { keyPrefix: deps.config.operator.brand.keyPrefix }, catalog, announce: (userId, event) => events.publish(userId, event) });
  const managedUpstreams = new UpstreamsService({ ...deps, settings: deps.config.managedUpstreams, catalog, env: deps.config.environment });
  const responses = new ResponsesStore({ ...deps, settings: deps.config.responses });
  const { alerts, pubsub } = createAlerts(deps, identity, events);
  // What another process changed: drop its cached keys, take its catalog.
  deps.shared?.onMessage((message) => {
    if (message.type === 'key-evicted') keys.evictKey(message.keyId);
    else if (message.type === 'catalog-changed') catalog.adopt(message.data, message.version);
    else if (message.type === 'upstream-health') health.adopt(message.change);
    else if (message.type === 'upstreams-changed') managedUpstreams.adoptRemote(message.version).catch((error: unknown) => deps.log.warn({ err: error }, 'could not take the upstreams another process changed'));
  });
  return {
    events,
    balanceEvents,
    accounts,
    identity,
    adminAccounts: new AdminAccountsService({ ...deps, keys }),
    catalog,
    keys,
    billing,
    wallets,
    limiter,
    usage,
    usagePartitions: new UsagePartitions({ ...deps, settings: deps.config.usagePartitions }),
    upstreams,
    health,
    routes,
    managedUpstreams,
    inference: new InferenceService({ catalog, wallets, limiter, routes, health, upstreams, recorder: usage, log: deps.log, metrics, responses, hostedTools: deps.config.operator.inference.hostedTools, cacheAffinity: deps.config.operator.inference.cacheAffinity, tracing: deps.tracing, refusals }),
    keyStatus: new KeyStatusService({ catalog, accounts, wallets }),
    countTokens: new CountTokensService({ catalog, routes, upstreams, limiter, log: deps.log }),
    video: new VideoService({
      ...deps,
      pubsub,
      catalog,
      billing,
      routes,
      upstreams,
      storage: new LocalVideoStorage(path.join(deps.config.dataDir, 'videos')),
      recorder: usage,
      settings: deps.config.video,
    }),
    analytics: new AnalyticsService({ ...deps, leaderboard: deps.config.leaderboard, catalog }),
    margin: new MarginService(deps),
    upstreamOps: new UpstreamOps({ routes, health, upstreams }),
    status: new StatusService({ ...deps, settings: deps.config.status, catalog, routes, upstreams }),
    announcements: new AnnouncementsService(deps),
    payments: new PaymentsService({ ...deps, pubsub, settings: deps.config.payments, billing, identity }),
    responses,
    webhooks: new WebhooksService({ ...deps, settings: deps.config.webhooks, mail: deps.config.mail, brandName: deps.config.operator.brand.name }),
    metrics,
    alerts,
    organizations: new OrganizationsService({ ...deps, keys, mailer: identity.mailer, identity, settings: { ...deps.config.organizations, brandName: deps.config.operator.brand.name } }),
    organizationUsage: new OrganizationUsageService({ ...deps, catalog, balances: balanceEvents }),
  };
}

/** Account events and their producers' ends: usage batches, ledger rows (balance events) and limit refusals. */
function accountEvents(deps: ServiceDeps, wallets: WalletStore) {
  const events = new AccountEventHub({ shared: deps.shared, log: deps.log });
  const publish = (userId: string, event: AccountEvent) => events.publish(userId, event);
  const balanceEvents = new BalanceEvents({ orm: deps.orm, wallets, log: deps.log, publish, audible: (userId) => events.audible(userId) });
  const committed = (batch: CommittedBatch) => {
    announceUsage(events, batch, keyIdOfRecord);
    balanceEvents.announce(batch.ledger);
  };
  return { events, balanceEvents, refusals: new LimitRefusals(publish), committed };
}

/**
 * Alerts hear what this process committed: ledger rows, usage batches and key events through the hub, paid
 * invoices and finished video tasks through what those services publish (the pub/sub answered here, theirs).
 */
function createAlerts(deps: ServiceDeps, identity: IdentityService, events: AccountEventHub): { alerts: AlertsService; pubsub: PubSub } {
  const sender = identity.messengerSender;
  const alerts = new AlertsService({
    ...deps,
    settings: deps.config.alerts,
    delivery: {
      brandName: deps.config.operator.brand.name,
      sendMail: (to, content) => identity.mailer.send({ to, ...content }),
      sendMessenger: sender.available ? (messengerUserId, text) => sender.send(messengerUserId, text) : null,
    },
    // An `alert.triggered` webhook, queued in the transaction that records the crossing (fired once, delivered at least once).
    onFired: (tx, userId, { kind, ...details }) => enqueueWebhookEvent(tx, { userId, type: 'alert.triggered', data: { alert: kind, ...details } }),
  });
  events.onPublished((userId) => alerts.changed(userId), (userId) => alerts.watches(userId));
  // Which accounts have rules, as other processes save them.
  deps.shared?.onMessage((message) => {
    if (message.type === 'alerts-changed') alerts.adopt(message.userId, message.active);
  });
  return { alerts, pubsub: withAlertEvents(deps.pubsub, (userId, event) => alerts.event(userId, event)) };
}

/** The gauges /metrics reads from the live parts. */
function createMetrics(deps: ServiceDeps, parts: { health: UpstreamHealth; wallets: WalletStore; limiter: RequestLimiter }): Metrics {
  return new Metrics({
    upstreamTargets: () => parts.health.snapshot(),
    activeHolds: () => parts.wallets.activeHolds,
    concurrencySlots: () => parts.limiter.inFlightTotal,
    redisUp: () => (deps.shared ? deps.shared.healthy : null),
    databaseUp: () => deps.orm.em.fork().execute('select 1').then(() => true, () => false),
    replica: deps.reads?.status?.bind(deps.reads),
  });
}

/** Balances and limits: in this process, or shared through Redis (a request's hold is then its concurrency slot). */
function admissionStores(deps: ServiceDeps, baselines: LimitBaselines): { wallets: WalletStore; limiter: RequestLimiter } {
  if (!deps.shared) return { wallets: new Wallets(deps), limiter: new Limiter(baselines) };
  const wallets = new SharedWallets({ orm: deps.orm, shared: deps.shared, log: deps.log, leaseMs: deps.config.slotLeaseMs });
  return { wallets, limiter: new SharedLimiter(deps.shared, wallets, deps.log, { leaseMs: deps.config.slotLeaseMs, baselines }) };
}
