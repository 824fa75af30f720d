import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseRedisUrl } from './shared/redis-url.js';
import { resolveUpstreams, upstreamsSchema, type Upstream } from './upstreams/config.js';
import { paymentsSchema, resolvePayments, type PaymentsSettings } from './payments/payments.config.js';
import type { UpstreamsSettings } from './upstreams/upstreams.service.js';
import { leaderboardSettings, type LeaderboardSettings } from './usage/leaderboard-settings.js';
import type { UsagePartitionSettings } from './usage/usage-partitions.js';
import type { StatusSettings } from './status/status.service.js';
import type { VideoSettings } from './video/video.config.js';
import type { ResponsesSettings } from './inference/responses-store.js';
import type { LoginThrottleSettings, MessengerSettings, RegisterThrottleSettings, SessionSettings } from './accounts/accounts.settings.js';
import type { MailSettings } from './mail/mailer.js';
import type { AlertsSettings } from './events/alerts/alerts.service.js';
import type { WebhooksSettings } from './events/webhooks/webhooks.settings.js';
import type { OrganizationsSettings } from './organizations/organizations.service.js';

/** Thrown at boot when the environment or the operator file is wrong; the message names the bad setting. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

function redisUrlIssues(url: string, ctx: z.RefinementCtx): void {
  try {
    parseRedisUrl(url);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
}

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: optionalString.pipe(
    z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL').optional(),
  ),
  /** A read replica (streaming standby) of DATABASE_URL that only the analytics read; unset: they read DATABASE_URL. */
  DATABASE_READ_URL: optionalString.pipe(
    z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL').refine((url) => URL.canParse(url), 'is not a valid URL').optional(),
  ),
  /** How long a start waits for the PostgreSQL of DATABASE_URL to accept connections (it may be starting beside us). */
  DATABASE_CONNECT_TIMEOUT_SECONDS: z.coerce.number().min(0).max(3_600).default(15),
  /** One Redis, or a Redis Cluster by some of its nodes (src/shared/redis-url.ts has the forms). */
  REDIS_URL: optionalString.pipe(z.string().superRefine(redisUrlIssues).optional()),
  /** Prefix of every Redis key and channel, so several deployments (or test runs) can share one Redis. */
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_-]{1,64}$/).default('baikal:'),
  /** Worker processes on one port (node cluster); default: one per core with Redis, 1 without. */
  WORKERS: optionalString.pipe(z.string().regex(/^[1-9][0-9]{0,2}$/, 'must be a whole number from 1 to 999').transform(Number).optional()),
  /** How long a concurrency slot outlives a process that died holding it (shared limits only). */
  SLOT_LEASE_SECONDS: z.coerce.number().min(0.3).max(600).default(15),
  /** The length of a key's rate window: its requests-per-minute limit counts requests inside it (SPEC.md: a minute; tests shorten it). */
  RATE_WINDOW_SECONDS: z.coerce.number().min(0.1).max(3_600).default(60),
  /** Requests in flight per account, across its keys (an admin may set another per account). SPEC.md's per-key and global limits stay. */
  ACCOUNT_CONCURRENCY_LIMIT: z.coerce.number().int().positive().max(100_000).default(16),
  /** A client that accepts no bytes of its stream for this long is cut, billed for what was delivered, its slot freed. */
  STREAM_WRITE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3_600).default(30),
  /** Bearer token for GET /metrics (Prometheus); unset: /metrics answers 404. */
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  DATA_DIR: z.string().min(1).default('./.data'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Optional JSON file with operator data (catalog, upstreams, payment methods). */
  BAIKAL_CONFIG: optionalString,
  /** Catalog file seeded into the database on first start (default: the shipped catalog of SPEC.md). */
  BAIKAL_CATALOG: optionalString,
  /** Port for the embedded PostgreSQL; 0 picks a free one at every start. */
  EMBEDDED_PG_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** Set when the gateway is served over HTTPS (directly or behind a proxy): cookies get Secure and the __Host- prefix. */
  PUBLIC_HTTPS: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((value) => value === 'true' || value === '1'),
  /** express "trust proxy" setting, so client addresses behind a reverse proxy are right. */
  TRUST_PROXY: optionalString,
  SESSION_IDLE_HOURS: z.coerce.number().positive().default(24 * 7),
  SESSION_MAX_DAYS: z.coerce.number().positive().default(30),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().positive().default(5),
  LOGIN_MAX_ATTEMPTS_PER_ADDRESS: z.coerce.number().int().positive().default(30),
  LOGIN_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().positive().default(15 * 60),
  /** Accounts registered per client address per window: each costs a password hash and may send an e-mail. */
  REGISTER_MAX_PER_ADDRESS: z.coerce.number().int().positive().default(1_000),
  REGISTER_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().positive().default(60 * 60),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().positive().default(15),
  /** graphql-ws: open sockets per account and per client address (each process), and how long they may sit. */
  WS_MAX_PER_ACCOUNT: z.coerce.number().int().positive().default(20),
  WS_MAX_PER_ADDRESS: z.coerce.number().int().positive().default(50),
  WS_ANONYMOUS_SUBSCRIBE_SECONDS: z.coerce.number().positive().max(3_600).default(10),
  WS_IDLE_SECONDS: z.coerce.number().positive().max(86_400).default(600),
  WS_SESSION_RECHECK_SECONDS: z.coerce.number().positive().max(3_600).default(30),
  /** Slow-loris bounds: a client must send its headers, and then its whole request, within these. */
  HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().max(3_600).default(20),
  HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(3_600).default(120),
  /** Video job runner loops in this process (0: this process only serves the API). */
  VIDEO_WORKERS: z.coerce.number().int().min(0).max(64).default(2),
  VIDEO_POLL_MS: z.coerce.number().int().min(10).default(2_000),
  VIDEO_LEASE_MS: z.coerce.number().int().min(100).default(60_000),
  VIDEO_DEADLINE_MINUTES: z.coerce.number().positive().default(30),
  /**
   * How long finished requests' usage records wait to be written together (their events, ledger debits and
   * rollups in one transaction). Longer: fewer, larger batches and less PostgreSQL work per request; shorter:
   * less to lose if the process is killed. Balances move in memory at once either way.
   */
  USAGE_FLUSH_MS: z.coerce.number().int().min(1).max(10_000).default(100),
  /**
   * Whole months of usage events kept before the current one; older monthly partitions are dropped once their
   * hourly rollups are verified (docs/partitioning.md). Unset: every event is kept. At least 1: the current and
   * the previous month are never dropped.
   */
  USAGE_RETENTION_MONTHS: optionalString.pipe(z.string().regex(/^[1-9][0-9]{0,3}$/, 'must be a whole number of months from 1 to 9999').transform(Number).optional()),
  /** Alerts: an account's rules are evaluated at most once per this many milliseconds after its changes. */
  ALERTS_COALESCE_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** Seconds between service-status probe rounds (fractions allowed); 0 disables the monitor. */
  STATUS_PROBE_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  /** How long one upstream probe may take before it counts as down. */
  STATUS_PROBE_TIMEOUT_MS: z.coerce.number().int().min(10).max(120_000).default(5_000),
  /** Outgoing mail: `smtp://user:pass@host:port` (or smtps://). Unset: the development transport (log + email_outbox table). */
  SMTP_URL: optionalString.pipe(z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional()),
  MAIL_FROM: z.string().min(3).default('Baikal <no-reply@baikal.localhost>'),
  /** Language of e-mails when the request names none. */
  MAIL_LANGUAGE: z.enum(['ru', 'en']).default('en'),
  /** E-mail codes (verification, e-mail link): at most one per cooldown and this many per hour per account. */
  EMAIL_CODE_COOLDOWN_SECONDS: z.coerce.number().min(0).default(60),
  EMAIL_CODE_MAX_PER_HOUR: z.coerce.number().int().positive().default(5),
  /** How long a stored response (`store: true` on /v1/responses) is kept; fractions allowed. */
  RESPONSES_TTL_DAYS: z.coerce.number().positive().max(3_650).default(30),
  /** Outbound webhooks (docs/webhooks.md): delivery loops per process, poll, lease, retry unit, auto-disable window, endpoints per account. */
  WEBHOOKS_WORKERS: z.coerce.number().int().min(0).max(64).default(2),
  WEBHOOKS_POLL_MS: z.coerce.number().int().min(10).default(1_000),
  WEBHOOKS_LEASE_SECONDS: z.coerce.number().positive().default(30),
  WEBHOOKS_RETRY_BASE_MS: z.coerce.number().int().min(1).default(5_000),
  WEBHOOKS_DISABLE_AFTER_DAYS: z.coerce.number().positive().default(5),
  WEBHOOKS_MAX_ENDPOINTS: z.coerce.number().int().min(1).max(1_000).default(10),
  /** The cabinet's public address for links in e-mails (unset: the request's own), and how long an organization invitation works. */
  PUBLIC_URL: optionalString.pipe(z.url('must be an http(s) URL').regex(/^https?:\/\//, 'must be an http(s) URL').optional()),
  ORG_INVITATION_TTL_DAYS: z.coerce.number().positive().max(365).default(7),
  /** Development and tests only: webhooks may go to plain http and local addresses (logged as a warning at start). */
  WEBHOOKS_ALLOW_INSECURE_URLS: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((value) => value === 'true' || value === '1'),
});

/** Operator data. Later capabilities (catalog, upstreams, payments) add their sections here. */
const operatorFileSchema = z
  .object({
    brand: z
      .object({
        name: z.string().min(1).default('Baikal'),
        keyPrefix: z.string().regex(/^[a-z0-9]{2,16}$/).default('baikal'),
      })
      .prefault({}),
    upstreams: upstreamsSchema,
    /** How /v1 treats what a route cannot serve. */
    inference: z
      .strictObject({
        /** Hosted tools (web search, file search, ...) on a route that cannot run them: withheld from the model and named in the `x-withheld-tools` header, or refused with a 400. */
        hostedTools: z.enum(['withhold', 'refuse']).default('withhold'),
        /** Requests of one account with the same prompt_cache_key, metadata.user_id or long prefix stay on one upstream credential (its prompt cache) while it is healthy. */
        cacheAffinity: z.boolean().default(true),
      })
      .prefault({}),
    payments: paymentsSchema,
    /** The messenger bot adapter (DESIGN.md: Messenger linking); absent: messenger linking is off. */
    messenger: z
      .strictObject({
        label: z.string().min(1).max(64),
        botUrl: z.url(),
        /** Environment variable holding the bot webhook's HMAC secret. */
        webhookSecretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/),
        tokenTtlMinutes: z.number().int().min(1).max(1440).default(15),
        /** Where the bot takes messages to send to a linked user (alerts): POST {user_id, text}, signed like its webhook. Absent: the gateway sends none. */
        sendUrl: z.url().optional(),
      })
      .optional(),
  })
  .loose();

export type OperatorConfig = z.output<typeof operatorFileSchema>;

export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
  /** DATABASE_READ_URL: where usage lists, summaries, timeseries, the leaderboard and the margin report read. Never logged (it may hold a password). */
  databaseReadUrl?: string;
  databaseConnectTimeoutMs: number;
  redisUrl?: string;
  redisPrefix: string;
  /** Worker processes; more than one only with Redis (checked at load). */
  workers: number;
  slotLeaseMs: number;
  rateWindowMs: number;
  accountConcurrencyLimit: number;
  streamWriteTimeoutMs: number;
  /** Never logged, never shown. */
  metricsToken?: string;
  dataDir: string;
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: string;
  embeddedPgPort: number;
  publicHttps: boolean;
  trustProxy?: string;
  session: SessionSettings;
  loginThrottle: LoginThrottleSettings;
  registerThrottle: RegisterThrottleSettings;
  shutdownGraceMs: number;
  /** graphql-ws limits (see src/graphql-ws.ts). */
  websocket: { maxPerAccount: number; maxPerAddress: number; anonymousSubscribeMs: number; idleMs: number; sessionRecheckMs: number };
  /** node:http's headersTimeout and requestTimeout (the first never above the second). */
  httpTimeouts: { headersMs: number; requestMs: number };
  video: VideoSettings;
  status: StatusSettings;
  /** USAGE_FLUSH_MS. */
  usageFlushMs: number;
  /** USAGE_RETENTION_MONTHS: the usage partitions' upkeep. */
  usagePartitions: UsagePartitionSettings;
  /** ALERTS_COALESCE_MS (the default language is MAIL_LANGUAGE). */
  alerts: AlertsSettings;
  operator: OperatorConfig;
  configFile?: string;
  catalogFile?: string;
  /** Upstreams with their credentials resolved; never logged, never shown. */
  upstreams: Upstream[];
  /** What the managed upstreams' store needs: the file's upstreams as its seed, where a generated secret key lives. */
  managedUpstreams: UpstreamsSettings;
  leaderboard: LeaderboardSettings;
  /**
   * The environment this configuration was read from: where managed upstreams resolve their credentials'
   * variables and traces their OTEL_* settings (a gateway started in-process may be given its own).
   */
  environment: NodeJS.ProcessEnv;
  /** The operator's payments section with the checkout webhook secret resolved from the environment; never shown. */
  payments: PaymentsSettings;
  mail: MailSettings;
  /** The messenger section with its webhook secret resolved; null when not configured. Never shown. */
  messenger: MessengerSettings | null;
  /** Stored responses: how long one is kept after it is written. */
  responses: ResponsesSettings;
  webhooks: WebhooksSettings;
  organizations: Omit<OrganizationsSettings, 'brandName'>;
}

/** zod's words, except for a number given something else: "expected number, received NaN" does not say what was given. */
function messageOf(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code !== 'invalid_type' || issue.expected !== 'number') return issue.message;
  const given = issue.path.reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined), input);
  return given === undefined ? issue.message : `must be a number, not ${JSON.stringify(given)}`;
}

function formatIssues(prefix: string, error: z.ZodError, input: unknown): string {
  return error.issues
    .map((issue) => `${prefix}${issue.path.length ? issue.path.join('.') : '(root)'}: ${messageOf(issue, input)}`)
    .join('; ');
}

/** For entry points: the configuration, or a one-line message naming the bad setting and exit code 2. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`baikal: ${error.message}\n`);
    process.exit(2);
  }
}

/** Reads and validates configuration. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(`Invalid environment: ${formatIssues('', parsed.error, env)}`);
  const e = parsed.data;

  // Without Redis each process would keep its own limits and holds, and N processes would admit N times the limit.
  if (e.WORKERS !== undefined && e.WORKERS > 1 && !e.REDIS_URL) {
    throw new ConfigError(`WORKERS=${e.WORKERS} needs REDIS_URL: several processes share limits and holds only through Redis; set REDIS_URL or WORKERS=1`);
  }
  const workers = e.WORKERS ?? (e.REDIS_URL ? availableParallelism() : 1);
  const operator = readOperatorFile(e.BAIKAL_CONFIG);
  const upstreams = asConfigError(() => resolveUpstreams(operator.upstreams, env));
  const payments = asConfigError(() => resolvePayments(operator.payments, env));
  const messenger = messengerSettings(operator.messenger, env);

  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    databaseConnectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_SECONDS * 1000,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    workers,
    slotLeaseMs: Math.round(e.SLOT_LEASE_SECONDS * 1000),
    rateWindowMs: Math.round(e.RATE_WINDOW_SECONDS * 1000),
    accountConcurrencyLimit: e.ACCOUNT_CONCURRENCY_LIMIT,
    streamWriteTimeoutMs: Math.round(e.STREAM_WRITE_TIMEOUT_SECONDS * 1000),
    metricsToken: e.METRICS_TOKEN,
    dataDir: path.resolve(e.DATA_DIR),
    nodeEnv: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    publicHttps: e.PUBLIC_HTTPS,
    trustProxy: e.TRUST_PROXY,
    session: { idleMs: e.SESSION_IDLE_HOURS * 3_600_000, absoluteMs: e.SESSION_MAX_DAYS * 86_400_000 },
    registerThrottle: { maxPerAddress: e.REGISTER_MAX_PER_ADDRESS, windowMs: e.REGISTER_THROTTLE_WINDOW_SECONDS * 1000 },
    loginThrottle: {
      maxFailuresPerAccount: e.LOGIN_MAX_FAILURES_PER_ACCOUNT,
      maxAttemptsPerAddress: e.LOGIN_MAX_ATTEMPTS_PER_ADDRESS,
      windowMs: e.LOGIN_THROTTLE_WINDOW_SECONDS * 1000,
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_SECONDS * 1000,
    websocket: {
      maxPerAccount: e.WS_MAX_PER_ACCOUNT,
      maxPerAddress: e.WS_MAX_PER_ADDRESS,
      anonymousSubscribeMs: e.WS_ANONYMOUS_SUBSCRIBE_SECONDS * 1000,
      idleMs: e.WS_IDLE_SECONDS * 1000,
      sessionRecheckMs: e.WS_SESSION_RECHECK_SECONDS * 1000,
    },
    httpTimeouts: { headersMs: Math.min(e.HTTP_HEADERS_TIMEOUT_SECONDS, e.HTTP_REQUEST_TIMEOUT_SECONDS) * 1000, requestMs: e.HTTP_REQUEST_TIMEOUT_SECONDS * 1000 },
    video: { workers: e.VIDEO_WORKERS, pollMs: e.VIDEO_POLL_MS, leaseMs: e.VIDEO_LEASE_MS, deadlineMs: e.VIDEO_DEADLINE_MINUTES * 60_000 },
    status: { probeIntervalMs: Math.round(e.STATUS_PROBE_SECONDS * 1000), probeTimeoutMs: e.STATUS_PROBE_TIMEOUT_MS },
    usageFlushMs: e.USAGE_FLUSH_MS,
    usagePartitions: { retentionMonths: e.USAGE_RETENTION_MONTHS ?? null },
    alerts: { coalesceMs: e.ALERTS_COALESCE_MS, defaultLanguage: e.MAIL_LANGUAGE },
    operator,
    configFile: e.BAIKAL_CONFIG,
    catalogFile: e.BAIKAL_CATALOG,
    upstreams,
    managedUpstreams: { dataDir: path.resolve(e.DATA_DIR), production: e.NODE_ENV === 'production', definitions: operator.upstreams },
    leaderboard: leaderboardSettings((operator as { leaderboard?: { timezone?: unknown; prize?: unknown } }).leaderboard),
    environment: env,
    payments,
    mail: {
      smtpUrl: e.SMTP_URL,
      from: e.MAIL_FROM,
      language: e.MAIL_LANGUAGE,
      cooldownMs: e.EMAIL_CODE_COOLDOWN_SECONDS * 1000,
      maxPerHour: e.EMAIL_CODE_MAX_PER_HOUR,
    },
    messenger,
    responses: { ttlMs: Math.round(e.RESPONSES_TTL_DAYS * 86_400_000) },
    webhooks: webhooksSettings(e),
    organizations: { publicUrl: e.PUBLIC_URL ?? null, invitationTtlMs: Math.round(e.ORG_INVITATION_TTL_DAYS * 86_400_000), language: e.MAIL_LANGUAGE },
  };
}

/** WEBHOOKS_* as the webhooks service takes them (a rotated secret keeps signing for 24 hours). */
function webhooksSettings(e: z.output<typeof envSchema>): WebhooksSettings {
  return {
    workers: e.WEBHOOKS_WORKERS,
    pollMs: e.WEBHOOKS_POLL_MS,
    leaseMs: Math.round(e.WEBHOOKS_LEASE_SECONDS * 1000),
    retryBaseMs: e.WEBHOOKS_RETRY_BASE_MS,
    disableAfterMs: Math.round(e.WEBHOOKS_DISABLE_AFTER_DAYS * 86_400_000),
    maxEndpoints: e.WEBHOOKS_MAX_ENDPOINTS,
    rotationGraceMs: 86_400_000,
    allowInsecureUrls: e.WEBHOOKS_ALLOW_INSECURE_URLS,
  };
}

/** The operator file (BAIKAL_CONFIG), validated; `{}` when none is named. */
function readOperatorFile(file: string | undefined): OperatorConfig {
  let raw: unknown = {};
  if (file) {
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new ConfigError(`BAIKAL_CONFIG: cannot read ${file}: ${(error as Error).message}`);
    }
  }
  const operator = operatorFileSchema.safeParse(raw);
  if (!operator.success) throw new ConfigError(`Invalid operator config ${file}: ${formatIssues('', operator.error, raw)}`);
  return operator.data;
}

/** A section's own resolution failure (a credential variable unset, say) is a configuration error naming it. */
function asConfigError<T>(resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** The messenger section with its webhook secret read from the variable it names; null when not configured. */
function messengerSettings(section: OperatorConfig['messenger'], env: NodeJS.ProcessEnv): MessengerSettings | null {
  if (!section) return null;
  const secret = env[section.webhookSecretEnv];
  if (!secret || secret.length < 16) throw new ConfigError(`messenger.webhookSecretEnv: environment variable ${section.webhookSecretEnv} must hold a secret of at least 16 characters`);
  return { label: section.label, botUrl: section.botUrl, webhookSecret: secret, tokenTtlMs: section.tokenTtlMinutes * 60_000, sendUrl: section.sendUrl ?? null };
}
