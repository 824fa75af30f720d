import type { MikroORM } from '@mikro-orm/postgresql';
import type { Catalog } from '../catalog/catalog.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { RouteTable } from '../upstreams/routes.js';
import { authHeaders } from '../upstreams/auth.js';
import type { UpstreamClient } from '../upstreams/client.js';
import type { Upstream } from '../upstreams/model.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';
import { Topics, type PubSub, type ServiceStatusChangedPayload } from '../shared/pubsub.js';
import { StatusRepository, type Availability, type Observation } from './status.repository.js';

export type { Availability } from './status.repository.js';
/** A model's status as users see it: `checking` until its first probe. */
export type ModelAvailability = Availability | 'checking';

export interface StatusPointView {
  observedAt: Date;
  status: Availability;
}

export interface ModelStatusView {
  id: string;
  label: string;
  status: ModelAvailability;
  checkedAt: Date | null;
  /** Recorded observations of the last 24 hours (at most 60, the newest), oldest first. */
  history: StatusPointView[];
}

export interface UptimeView {
  /** Percent with two decimals, e.g. "99.50". */
  allTime: string;
  last24h: string;
  last7d: string;
  last30d: string;
}

export interface GroupStatusView {
  id: string;
  label: string;
  status: Availability;
  uptime: UptimeView;
  models: ModelStatusView[];
}

export interface ServiceStatusView {
  generatedAt: Date;
  groups: GroupStatusView[];
}

/** A status row is written when the status changed, and otherwise at most this often (a heartbeat). */
export const HEARTBEAT_MS = 30 * 60_000;
/** History older than this is pruned (its uptime is folded into the per-group rollup first). */
export const RETENTION_MS = 30 * 86_400_000;
/** What `history` shows per model. */
export const HISTORY_WINDOW_MS = 86_400_000;
export const HISTORY_MAX_POINTS = 60;
const PRUNE_EVERY_MS = 60 * 60_000;
/** Concurrent and back-to-back readers of the public status page share one computation for this long. */
const VIEW_TTL_MS = 1_000;

interface MonitoredModel {
  id: string;
  label: string;
  upstreams: Upstream[];
}

interface MonitoredGroup {
  id: string;
  label: string;
  models: MonitoredModel[];
}

/** STATUS_PROBE_SECONDS and STATUS_PROBE_TIMEOUT_MS: `probeIntervalMs` 0 means the monitor does not run. */
export interface StatusSettings {
  probeIntervalMs: number;
  probeTimeoutMs: number;
}

interface Deps {
  orm: MikroORM;
  settings: StatusSettings;
  clock: Clock;
  pubsub: PubSub;
  log: Logger;
  catalog: CatalogService;
  routes: RouteTable;
  upstreams: UpstreamClient;
}

/**
 * The service-status monitor and its read side.
 *
 * Every `STATUS_PROBE_SECONDS` (and once at start) it probes each distinct upstream that serves a
 * model of a public group, cheaply: `GET {baseUrl}/models` with the kind's credentials, 2xx = up,
 * anything else (an error status, a refused connection, no answer within `STATUS_PROBE_TIMEOUT_MS`) =
 * down. A model in a group is `active` when any of its routes' upstreams is up, else `unavailable` (a
 * model with no route at all is `unavailable` without a probe); a group is `active` when any of its
 * models is. Each round then, in one transaction under an advisory lock (so several gateway processes
 * record one history):
 * - rewrites `model_status_current` (status and `checked_at` per model);
 * - appends to `model_status_checks` a row per model and per group whose status differs from its last
 *   row, or whose last row is older than HEARTBEAT_MS;
 * and publishes every change on SERVICE_STATUS_CHANGED after the commit. Hourly, rows older than 30
 * days are pruned after their uptime is folded into `model_status_uptime_rollups`.
 *
 * Group uptime is the time-weighted share of a window during which the group's recorded state was
 * `active` (a state holds until the next observation; the last one until now), over the observed part
 * of the window; it is computed in SQL. Upstream ids, hosts and credentials never leave this class
 * except in operator logs (ids and failure kinds only).
 */
export class StatusService {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private abort = new AbortController();
  private lastPruneAt = 0;
  private readonly upstreamHealth = new Map<string, boolean>();
  private cached: { at: number; view: Promise<ServiceStatusView> } | null = null;

  private readonly store: StatusRepository;

  constructor(protected readonly deps: Deps) {
    this.store = new StatusRepository(deps.orm);
  }

  private get settings(): StatusSettings {
    return this.deps.settings;
  }

  /** Starts probing (at once, then every interval); a no-op when STATUS_PROBE_SECONDS is 0. */
  start(): void {
    if (!this.stopped) return;
    if (this.settings.probeIntervalMs <= 0) {
      this.deps.log.info('service status monitor disabled (STATUS_PROBE_SECONDS=0)');
      return;
    }
    this.stopped = false;
    this.abort = new AbortController();
    this.schedule(0);
  }

  /** Stops probing; resolves when a round in progress has finished (its probes are aborted). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      const startedAt = Date.now();
      this.running = this.probeNow()
        .catch((error: unknown) => {
          if (!this.stopped) this.deps.log.warn({ err: error }, 'service status round failed');
        })
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(Math.max(0, this.settings.probeIntervalMs - (Date.now() - startedAt)));
        });
    }, delayMs);
    this.timer.unref?.();
  }

  /** The public status page (SPEC.md Service status): public groups, their models, uptime and history. */
  async get(): Promise<ServiceStatusView> {
    const cached = this.cached;
    if (cached && Date.now() - cached.at < VIEW_TTL_MS) return cached.view;
    const view = this.compute(this.deps.clock.now());
    const entry = { at: Date.now(), view };
    this.cached = entry;
    view.catch(() => {
      if (this.cached === entry) this.cached = null;
    });
    return view;
  }

  /** One probe round: probe, record, publish changes, prune when due. Exposed for tests and operators. */
  async probeNow(): Promise<void> {
    const groups = this.monitoredGroups(this.deps.catalog.snapshot, true);
    const distinct = new Map<string, Upstream>();
    for (const group of groups) for (const model of group.models) for (const upstream of model.upstreams) distinct.set(upstream.id, upstream);
    const health = new Map(await Promise.all([...distinct.values()].map(async (upstream) => [upstream.id, await this.probe(upstream)] as const)));
    // Stopped mid-round: the probes were cut short, so they say nothing about the upstreams.
    if (this.abort.signal.aborted) return;

    const observedAt = this.deps.clock.now();
    const observations: Observation[] = [];
    for (const group of groups) {
      let groupActive = false;
      for (const model of group.models) {
        const active = model.upstreams.some((u) => health.get(u.id) === true);
        groupActive ||= active;
        observations.push({ model: model.id, route_group: group.id, status: active ? 'active' : 'unavailable' });
      }
      observations.push({ model: null, route_group: group.id, status: groupActive ? 'active' : 'unavailable' });
    }

    const changes = await this.record(observations, observedAt);
    this.cached = null;
    const catalog = this.deps.catalog.snapshot;
    const ordered = [...changes].sort((a, b) => Number(a.model === null) - Number(b.model === null));
    for (const change of ordered) {
      const payload: ServiceStatusChangedPayload = {
        subject: change.model === null ? 'group' : 'model',
        groupId: change.route_group,
        groupLabel: catalog.groups.get(change.route_group)?.label ?? change.route_group,
        modelId: change.model,
        modelLabel: change.model === null ? null : (catalog.models.get(change.model)?.label ?? change.model),
        status: change.status,
        previousStatus: change.previous ?? 'checking',
        observedAt,
      };
      this.deps.log.info({ group: payload.groupId, model: payload.modelId, status: payload.status, previous: payload.previousStatus }, 'service status changed');
      this.deps.pubsub.publish(Topics.ServiceStatusChanged, payload);
    }

    if (observedAt.getTime() - this.lastPruneAt >= PRUNE_EVERY_MS) {
      this.lastPruneAt = observedAt.getTime();
      await this.prune(observedAt);
    }
  }

  /**
   * Folds the uptime of history older than the retention into the per-group rollups, then deletes that
   * history except the last row of each series (the state at the cut-off). Idempotent.
   */
  async prune(now: Date = this.deps.clock.now()): Promise<{ deleted: number }> {
    const cutoff = new Date(now.getTime() - RETENTION_MS).toISOString();
    const deleted = await this.store.prune(cutoff);
    this.cached = null;
    if (deleted) this.deps.log.info({ deleted }, 'service status history pruned');
    return { deleted };
  }

  /** Public groups (those offering at least one model) with their models in catalog order. */
  private monitoredGroups(catalog: Catalog, withRoutes: boolean): MonitoredGroup[] {
    const groups: MonitoredGroup[] = [];
    for (const group of catalog.data.groups) {
      if (!group.public) continue;
      const models = catalog.data.models
        .filter((m) => m.groups[group.id] !== undefined)
        .map((m) => ({ id: m.id, label: m.label, upstreams: withRoutes ? this.upstreamsOf(m.id, group.id) : [] }));
      if (models.length) groups.push({ id: group.id, label: group.label, models });
    }
    return groups;
  }

  private upstreamsOf(model: string, group: string): Upstream[] {
    const seen = new Map<string, Upstream>();
    for (const candidate of this.deps.routes.candidates(model, group)) seen.set(candidate.upstream.id, candidate.upstream);
    return [...seen.values()];
  }

  /** One upstream probe: `GET {baseUrl}/models` with the kind's auth headers; true when it answers 2xx in time. */
  private async probe(upstream: Upstream): Promise<boolean> {
    const headers = { accept: 'application/json', ...authHeaders(upstream) };
    const timeout = AbortSignal.timeout(this.settings.probeTimeoutMs);
    const signal = AbortSignal.any([this.abort.signal, timeout]);
    let up: boolean;
    let reason: string;
    try {
      const response = await this.deps.upstreams.get(upstream, '/models', headers, signal);
      await response.body.dump({ limit: 1 << 20, signal }).catch(() => undefined);
      up = response.status >= 200 && response.status < 300;
      reason = `status ${response.status}`;
    } catch (error) {
      up = false;
      reason = timeout.aborted ? 'timeout' : this.abort.signal.aborted ? 'stopped' : this.deps.upstreams.failureOf(error, upstream.id).kind;
    }
    const before = this.upstreamHealth.get(upstream.id);
    if (before !== up && !this.abort.signal.aborted) {
      if (up) this.deps.log.info({ upstream: upstream.id }, 'status probe: upstream is up');
      else this.deps.log.warn({ upstream: upstream.id, reason, ...probeHint(upstream, reason) }, 'status probe: upstream is down');
    }
    this.upstreamHealth.set(upstream.id, up);
    return up;
  }

  /** Writes one round; returns the series whose status changed (with the previous status, null if none). */
  private record(observations: Observation[], observedAt: Date): Promise<(Observation & { previous: Availability | null })[]> {
    return this.store.record(observations, observedAt.toISOString(), HEARTBEAT_MS / 1000);
  }

  private async compute(now: Date): Promise<ServiceStatusView> {
    const groups = this.monitoredGroups(this.deps.catalog.snapshot, false);
    const ids = JSON.stringify(groups.map((g) => g.id));
    const at = now.toISOString();
    const since = new Date(now.getTime() - HISTORY_WINDOW_MS).toISOString();
    const { current, history, uptime } = await this.store.read(ids, since, at, HISTORY_MAX_POINTS);

    const key = (group: string, model: string) => `${group}\u0000${model}`;
    const currentOf = new Map(current.map((row) => [key(row.route_group, row.model), row]));
    const historyOf = new Map<string, StatusPointView[]>();
    for (const row of history) {
      const list = historyOf.get(key(row.route_group, row.model)) ?? [];
      list.push({ observedAt: new Date(row.observed_at), status: row.status });
      historyOf.set(key(row.route_group, row.model), list);
    }
    const uptimeOf = new Map(uptime.map((row) => [`${row.route_group}\u0000${row.name}`, row.percent]));

    return {
      generatedAt: now,
      groups: groups.map((group) => {
        const models: ModelStatusView[] = group.models.map((model) => {
          const row = currentOf.get(key(group.id, model.id));
          return {
            id: model.id,
            label: model.label,
            status: row ? row.status : 'checking',
            checkedAt: row ? new Date(row.checked_at) : null,
            history: historyOf.get(key(group.id, model.id)) ?? [],
          };
        });
        const status: Availability = models.some((m) => m.status === 'active') ? 'active' : 'unavailable';
        // A window with no observed time yet (nothing recorded, or recorded just now) reads as the current state.
        const percent = (name: keyof UptimeView) => uptimeOf.get(`${group.id}\u0000${name}`) ?? (status === 'active' ? '100.00' : '0.00');
        return {
          id: group.id,
          label: group.label,
          status,
          uptime: { allTime: percent('allTime'), last24h: percent('last24h'), last7d: percent('last7d'), last30d: percent('last30d') },
          models,
        };
      }),
    };
  }
}

/** What an operator checks first when a probe answer points at the configuration rather than an outage. */
function probeHint(upstream: Upstream, reason: string): { hint?: string } {
  if (reason === 'status 401' || reason === 'status 403') return { hint: `the upstream refuses our credential: check ${upstream.credentials[0]!.id.startsWith('env:') ? upstream.credentials[0]!.id.slice(4) : `the credential ${upstream.credentials[0]!.label}`}` };
  if (reason === 'status 404') return { hint: `GET ${upstream.baseUrl}/models is not found: does baseUrl end with the API's version path (such as /v1)?` };
  return {};
}
