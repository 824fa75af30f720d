import { StartupError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import type { SharedState } from '../shared/redis.js';
import type { UpstreamDefinition } from './config.js';
import type { Upstream } from './model.js';
import { writeDefinitions } from './upstream-file.js';
import { resolveStored, type Resolution } from './upstream-resolution.js';
import type { StoredUpstreams, UpstreamsRepository } from './upstreams.repository.js';
import type { CredentialVault } from './vault.js';

export type UpstreamsListener = (upstreams: Upstream[]) => void;

export interface RegistryDeps {
  repository: UpstreamsRepository;
  vault: CredentialVault;
  /** Where credentials named by variable are read. */
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** The other gateway processes (REDIS_URL): told the version of each change committed here. */
  shared?: SharedState;
  /** The operator file's upstreams: seeded into empty tables on first start. */
  definitions: UpstreamDefinition[];
}

/**
 * The upstreams this process routes with: read from PostgreSQL with their secrets resolved, kept in memory, and
 * rebuilt whole after every committed change (here, or in another process, learned by version). Listeners get each
 * new set. Nothing here runs on the /v1 path: routing reads what a listener was given.
 */
export class UpstreamRegistry {
  private current: Upstream[] = [];
  private resolvedSecrets: string[] = [];
  /** -1 until the first load. */
  private loadedVersion = -1;
  private readonly listeners = new Set<UpstreamsListener>();
  /** Reloads run one after the other, so a slow read never replaces a newer one. */
  private reloads: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: RegistryDeps) {}

  get upstreams(): Upstream[] {
    return this.current;
  }

  get version(): number {
    return this.loadedVersion;
  }

  /** Every secret the stored credentials resolve to (for the credential redactor); in memory only. */
  secrets(): string[] {
    return [...this.resolvedSecrets];
  }

  onChange(listener: UpstreamsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Seeds empty tables from the operator file (once, ever), then reads and resolves the stored upstreams. */
  async load(): Promise<Upstream[]> {
    await this.seed();
    await this.reload();
    return this.current;
  }

  /** After a change committed here at `version`: take it, and tell the other processes. */
  async changed(version: number): Promise<void> {
    await this.reload();
    await this.deps.shared?.publish({ type: 'upstreams-changed', version });
  }

  /** Another process committed `version`: reload unless this process has it already. */
  async adoptRemote(version: number): Promise<void> {
    if (version > this.loadedVersion) await this.reload();
  }

  /** Reloads when the stored version moved on (a change made where no bus reached us: the CLI without Redis). */
  async poll(): Promise<void> {
    if ((await this.deps.repository.version()) > this.loadedVersion) await this.reload();
  }

  resolve(stored: StoredUpstreams): Resolution {
    return resolveStored(stored, { vault: this.deps.vault, env: this.deps.env });
  }

  private async seed(): Promise<void> {
    const { definitions, log } = this.deps;
    let seeded: boolean;
    try {
      seeded = await this.deps.repository.seedOnce(async (tx) => (await writeDefinitions(tx, definitions, { prune: false })).created.length);
    } catch (error) {
      throw new StartupError(`BAIKAL_CONFIG upstreams could not be stored: ${(error as Error).message}`);
    }
    if (seeded) {
      log.info({ upstreams: definitions.map((d) => d.id) }, 'upstreams seeded from BAIKAL_CONFIG into the database: admins manage them from now on; `npm run admin -- apply-upstreams` re-applies the file');
    } else if (definitions.length) {
      // An operator who edits the file and restarts would otherwise wonder why nothing changed.
      log.info('BAIKAL_CONFIG upstreams seed an empty database only: the stored upstreams are used; `npm run admin -- apply-upstreams` applies the file to them');
    }
  }

  private reload(): Promise<void> {
    const next = this.reloads.then(() => this.readAndSwap());
    this.reloads = next.catch(() => undefined);
    return next;
  }

  private async readAndSwap(): Promise<void> {
    const stored = await this.deps.repository.read();
    if (stored.version <= this.loadedVersion) return;
    const resolution = this.resolve(stored);
    this.report(stored, resolution);
    this.current = resolution.upstreams;
    this.resolvedSecrets = resolution.secrets;
    this.loadedVersion = stored.version;
    this.deps.log.info({ version: stored.version, upstreams: this.current.map((u) => u.id) }, 'upstreams loaded');
    for (const listener of this.listeners) {
      try {
        listener(this.current);
      } catch (error) {
        this.deps.log.error({ err: error }, 'an upstreams listener failed');
      }
    }
  }

  /** Says why an upstream or credential is left out: ids and variable names only, never a secret. */
  private report(stored: StoredUpstreams, resolution: Resolution): void {
    const { log } = this.deps;
    const enabledUpstreams = new Set(stored.upstreams.filter((u) => u.enabled).map((u) => u.id));
    for (const credential of stored.credentials) {
      const status = resolution.credentials.get(credential.id);
      if (!credential.enabled || !enabledUpstreams.has(credential.upstream_id) || !status || status.usable) continue;
      const where = { upstream: credential.upstream_id, credential: credential.id };
      if (credential.secret_env) log.warn({ ...where, env: credential.secret_env }, `upstream ${credential.upstream_id}: credential ${credential.id} is unusable: ${status.problem}`);
      else log.error(where, `upstream ${credential.upstream_id}: credential ${credential.id} is unusable: ${status.problem}`);
    }
    for (const [id, why] of resolution.skipped) {
      if (why !== 'disabled') log.warn({ upstream: id, reason: why }, `upstream ${id} is not routed: ${why}`);
    }
  }
}
