/** What the bench records: every figure of every round (medians are taken at the end) and the gateway's failures. */
import { median, measured, percentile, withLoopDelay, type PhaseCost, type Sample, type Target } from './load.js';
import { log, SLICE_SECONDS } from './settings.js';

export class Recorder {
  readonly results: Record<string, number[]> = {};
  /** Gateway failures by phase, HTTP status (0: connection failed) and error code, so an error count can be explained. */
  readonly failures = new Map<string, number>();

  add(name: string, value: number): void {
    (this.results[name] ??= []).push(value);
  }

  /** The median over the rounds. */
  m(name: string): number {
    return median(this.results[name] ?? []);
  }

  countFailures(samples: Sample[], phase: string): void {
    samples
      .filter((s) => !s.ok)
      .forEach((s) => {
        const detail = `${phase}: ${s.status} ${s.code ?? ''}`;
        this.failures.set(detail, (this.failures.get(detail) ?? 0) + 1);
      });
  }

  /** A gateway phase's event-loop delay and every target's PostgreSQL and Redis CPU per request, under `phase`. */
  addCost(phase: string, name: string, cost: PhaseCost, requests: number): void {
    this.add(`${phase}.${name}.postgres_ms_per_request`, cost.services.postgres / requests);
    this.add(`${phase}.${name}.redis_ms_per_request`, cost.services.redis / requests);
    if (cost.loop) for (const q of ['p50', 'p99', 'max'] as const) this.add(`${phase}.${name}.loop_${q}_ms`, cost.loop[q]);
  }
}

export type ByTarget = Map<Target['name'], { samples: Sample[]; cost: PhaseCost }>;

/**
 * The targets take turns in short slices (their order rotating), so a drift in the machine's speed over
 * the phase weighs on all three alike instead of on whichever ran during it. Per target: its samples and
 * its costs summed over the slices, and the gateway's event-loop delay over the whole phase.
 */
export async function inTurns(targets: Target[], gateway: Target, seconds: number, run: (target: Target, seconds: number) => Promise<Sample[]>): Promise<ByTarget> {
  const { result, loop } = await withLoopDelay(gateway, () => slicesInTurns(targets, seconds, run));
  result.get('gateway')!.cost.loop = loop;
  return result;
}

async function slicesInTurns(targets: Target[], seconds: number, run: (target: Target, seconds: number) => Promise<Sample[]>): Promise<ByTarget> {
  const byTarget: ByTarget = new Map(targets.map((t) => [t.name, { samples: [] as Sample[], cost: { cpuMs: 0, systemMs: 0, services: { postgres: 0, redis: 0 }, loop: null } as PhaseCost }]));
  const slices = Math.max(1, Math.round(seconds / SLICE_SECONDS));
  for (let slice = 0; slice < slices; slice++) {
    for (let turn = 0; turn < targets.length; turn++) {
      const target = targets[(slice + turn) % targets.length]!;
      const { result, ...cost } = await measured(target, () => run(target, seconds / slices));
      const sum = byTarget.get(target.name)!;
      sum.samples.push(...result);
      sum.cost.cpuMs += cost.cpuMs;
      sum.cost.systemMs += cost.systemMs;
      sum.cost.services.postgres += cost.services.postgres;
      sum.cost.services.redis += cost.services.redis;
    }
  }
  return byTarget;
}

/** Latency added over the upstream (the direct target) and CPU per request, per proxy, under `phase`. */
export function addLatencies(recorder: Recorder, targets: Target[], gateway: Target, phase: string, byTarget: ByTarget, metric: 'ttfb' | 'total'): void {
  const p = (name: Target['name'], q: number) => percentile(byTarget.get(name)!.samples.filter((s) => s.ok).map((s) => s[metric]), q);
  for (const target of targets) {
    const { samples, cost } = byTarget.get(target.name)!;
    recorder.addCost(phase, target.name, cost, samples.length);
    if (target.pid) {
      recorder.add(`${phase}.${target.name}.cpu_ms_per_request`, cost.cpuMs / samples.length);
      recorder.add(`${phase}.${target.name}.system_ms_per_request`, cost.systemMs / samples.length);
    }
  }
  for (const name of ['bare', 'gateway'] as const) {
    recorder.add(`${phase}.${name}.overhead_p50_ms`, p(name, 50) - p('direct', 50));
    recorder.add(`${phase}.${name}.overhead_p99_ms`, p(name, 99) - p('direct', 99));
  }
  recorder.add(`${phase}.direct.p50_ms`, p('direct', 50));
  addGeneratorLag(recorder, targets, gateway, phase, byTarget);
  recorder.countFailures(byTarget.get('gateway')!.samples, phase);
}

/** How late the open-loop generator sent, and how many requests it had unanswered; for the gateway's refusals, whether that was the cause. */
function addGeneratorLag(recorder: Recorder, targets: Target[], gateway: Target, phase: string, byTarget: ByTarget): void {
  const lagOf = (samples: Sample[]) => ({ late: Math.max(...samples.map((s) => s.late!)), unanswered: Math.max(...samples.map((s) => s.unanswered!)) });
  for (const target of targets) {
    const samples = byTarget.get(target.name)!.samples;
    if (samples[0]?.late === undefined) continue;
    const lag = lagOf(samples);
    recorder.add(`${phase}.${target.name}.generator_late_max_ms`, lag.late);
    recorder.add(`${phase}.${target.name}.unanswered_max`, lag.unanswered);
    const refused = samples.filter((s) => !s.ok);
    if (target === gateway && refused.length) {
      // Whether the load generator's own stall sent the refused requests in one burst, or the gateway slowed down.
      const at = lagOf(refused);
      log(`  ${phase} gateway: ${refused.length} failed; sent up to ${at.late.toFixed(0)} ms late with up to ${at.unanswered} unanswered (the phase's latest send: ${lag.late.toFixed(0)} ms)`);
    }
  }
}
