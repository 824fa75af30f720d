import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/**
 * SQL of the service-status monitor (see status.service.ts). A series is one (route_group, model) in
 * `model_status_checks`; the group's own series has model null, hence `coalesce(model, '')`, which the
 * series index covers.
 */

/** Serialises writers (probe rounds and pruning) across gateway processes. */
const LOCK_SQL = `select pg_advisory_xact_lock(hashtext('baikal.service_status'))`;

/**
 * One round's observations (JSON [{model, route_group, status}]) against each series' last row: a row is
 * appended when the status changed or the last row is older than the heartbeat. Returns the series
 * whose status changed, with the previous status (null when the series is new).
 * Params: observations json, observed_at, observed_at, heartbeat seconds.
 */
const RECORD_SQL = `
with obs as (
  select o.model, o.route_group, o.status
    from jsonb_to_recordset(?::jsonb) as o(model text, route_group text, status text)
),
cmp as (
  select o.model, o.route_group, o.status, l.status as previous, l.observed_at as last_at
    from obs o
    left join lateral (
      select c.status, c.observed_at
        from model_status_checks c
       where c.route_group = o.route_group and coalesce(c.model, '') = coalesce(o.model, '')
       order by c.observed_at desc, c.id desc
       limit 1
    ) l on true
),
ins as (
  insert into model_status_checks (model, route_group, status, observed_at)
  select model, route_group, status, ?::timestamptz
    from cmp
   where previous is null or previous <> status or last_at <= ?::timestamptz - make_interval(secs => ?::double precision)
  returning id
)
select model, route_group, status, previous from cmp where previous is distinct from status`;

/** Params: checked_at, model observations json. A late writer never moves `checked_at` back. */
const UPSERT_CURRENT_SQL = `
insert into model_status_current (route_group, model, status, checked_at)
select o.route_group, o.model, o.status, ?::timestamptz
  from jsonb_to_recordset(?::jsonb) as o(model text, route_group text, status text)
on conflict (route_group, model) do update set
  status = case when excluded.checked_at >= model_status_current.checked_at then excluded.status else model_status_current.status end,
  checked_at = greatest(excluded.checked_at, model_status_current.checked_at)`;

/** Drops models no longer offered in a public group. Params: model observations json. */
const DELETE_STALE_CURRENT_SQL = `
delete from model_status_current c
 where not exists (
   select 1 from jsonb_to_recordset(?::jsonb) as o(model text, route_group text)
    where o.model = c.model and o.route_group = c.route_group)`;

/** Params: group ids json. */
const CURRENT_SQL = `
select route_group, model, status, checked_at
  from model_status_current
 where route_group in (select jsonb_array_elements_text(?::jsonb))`;

/** The newest N model rows per series in (since, now], oldest first. Params: group ids json, since, now, N. */
const HISTORY_SQL = `
select route_group, model, status, observed_at
  from (
    select c.id, c.route_group, c.model, c.status, c.observed_at,
           row_number() over (partition by c.route_group, c.model order by c.observed_at desc, c.id desc) as rn
      from model_status_checks c
     where c.model is not null
       and c.route_group in (select jsonb_array_elements_text(?::jsonb))
       and c.observed_at > ?::timestamptz and c.observed_at <= ?::timestamptz
  ) h
 where h.rn <= ?::int
 order by h.route_group, h.model, h.observed_at, h.id`;

/**
 * Group uptime per window: the seconds the group's recorded state was active over the seconds it was
 * observed inside the window; each state holds until the next row, the last one until now. The
 * all-time window starts where the rollup of pruned history ends, and adds the rollup. `percent` is
 * null when nothing was observed in the window.
 * Params: group ids json, then now five times.
 */
const UPTIME_SQL = `
with groups as (select jsonb_array_elements_text(?::jsonb) as id),
windows as (
  select g.id as route_group, w.name, w.start_at
    from groups g
   cross join (values ('last24h', ?::timestamptz - interval '1 day'),
                      ('last7d', ?::timestamptz - interval '7 days'),
                      ('last30d', ?::timestamptz - interval '30 days')) as w(name, start_at)
  union all
  select g.id, 'allTime', coalesce(r.rolled_until, '-infinity'::timestamptz)
    from groups g left join model_status_uptime_rollups r on r.route_group = g.id
),
spans as (
  select c.route_group, c.status, c.observed_at as from_at,
         coalesce(lead(c.observed_at) over (partition by c.route_group order by c.observed_at, c.id), ?::timestamptz) as to_at
    from model_status_checks c
   where c.model is null and c.route_group in (select id from groups) and c.observed_at <= ?::timestamptz
),
sums as (
  select w.route_group, w.name,
         coalesce(sum(extract(epoch from s.to_at - greatest(s.from_at, w.start_at))) filter (where s.status = 'active'), 0) as up,
         coalesce(sum(extract(epoch from s.to_at - greatest(s.from_at, w.start_at))), 0) as observed
    from windows w
    left join spans s on s.route_group = w.route_group and s.to_at > w.start_at and s.to_at > s.from_at
   group by w.route_group, w.name
),
totals as (
  select s.route_group, s.name,
         s.up + case when s.name = 'allTime' then coalesce(r.up_seconds, 0) else 0 end as up,
         s.observed + case when s.name = 'allTime' then coalesce(r.observed_seconds, 0) else 0 end as observed
    from sums s left join model_status_uptime_rollups r on r.route_group = s.route_group
)
select route_group, name, case when observed > 0 then round(100 * up / observed, 2)::text end as percent
  from totals`;

/**
 * Folds the group uptime of everything before the cut-off into the rollups (from where the last fold
 * ended). Params: cutoff four times.
 */
const PRUNE_ROLLUP_SQL = `
with prev as (select route_group, rolled_until from model_status_uptime_rollups),
spans as (
  select c.route_group, c.status,
         greatest(c.observed_at, coalesce(p.rolled_until, '-infinity'::timestamptz)) as from_at,
         coalesce(lead(c.observed_at) over (partition by c.route_group order by c.observed_at, c.id), ?::timestamptz) as to_at
    from model_status_checks c
    left join prev p on p.route_group = c.route_group
   where c.model is null and c.observed_at < ?::timestamptz
     and coalesce(p.rolled_until, '-infinity'::timestamptz) < ?::timestamptz
),
sums as (
  select route_group,
         coalesce(sum(extract(epoch from to_at - from_at)) filter (where status = 'active'), 0) as up,
         coalesce(sum(extract(epoch from to_at - from_at)), 0) as observed
    from spans
   where to_at > from_at
   group by route_group
)
insert into model_status_uptime_rollups (route_group, up_seconds, observed_seconds, rolled_until)
select route_group, up, observed, ?::timestamptz from sums
on conflict (route_group) do update set
  up_seconds = model_status_uptime_rollups.up_seconds + excluded.up_seconds,
  observed_seconds = model_status_uptime_rollups.observed_seconds + excluded.observed_seconds,
  rolled_until = excluded.rolled_until`;

/** Deletes rows before the cut-off except each series' last one. Params: cutoff twice. */
const PRUNE_DELETE_SQL = `
with d as (
  delete from model_status_checks c
   where c.observed_at < ?::timestamptz
     and exists (
       select 1 from model_status_checks n
        where n.route_group = c.route_group and coalesce(n.model, '') = coalesce(c.model, '')
          and n.observed_at < ?::timestamptz and (n.observed_at, n.id) > (c.observed_at, c.id))
  returning 1
)
select count(*)::int as deleted from d`;

/** An observed status (what a probe can find). */
export type Availability = 'active' | 'unavailable';

/** One series' status in a round: a model in a group, or the group itself (model null). */
export interface Observation {
  model: string | null;
  route_group: string;
  status: Availability;
}

/** What the status page reads: each model's current status, its recent history, and each group's uptime. */
export interface StatusRows {
  current: { route_group: string; model: string; status: Availability; checked_at: Date | string }[];
  history: { route_group: string; model: string; status: Availability; observed_at: Date | string }[];
  uptime: { route_group: string; name: string; percent: string | null }[];
}

/**
 * The monitor's tables, in SQL: set-based appends and upserts under one advisory lock, and window
 * arithmetic for uptime, which a unit of work would not help with.
 */
export class StatusRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Writes one round; returns the series whose status changed (with the previous status, null if none). */
  record(observations: Observation[], at: string, heartbeatSeconds: number): Promise<(Observation & { previous: Availability | null })[]> {
    const models = JSON.stringify(observations.filter((o) => o.model !== null));
    return this.orm.em.fork().transactional(async (tx: EntityManager) => {
      await tx.execute(LOCK_SQL);
      const changes = await tx.execute<(Observation & { previous: Availability | null })[]>(RECORD_SQL, [JSON.stringify(observations), at, at, heartbeatSeconds]);
      await tx.execute(UPSERT_CURRENT_SQL, [at, models]);
      await tx.execute(DELETE_STALE_CURRENT_SQL, [models]);
      return changes;
    });
  }

  /** Folds history older than `cutoff` into the rollups and deletes it (but each series' last row). */
  prune(cutoff: string): Promise<number> {
    return this.orm.em.fork().transactional(async (tx: EntityManager) => {
      await tx.execute(LOCK_SQL);
      await tx.execute(PRUNE_ROLLUP_SQL, [cutoff, cutoff, cutoff, cutoff]);
      const [row] = await tx.execute<{ deleted: number }[]>(PRUNE_DELETE_SQL, [cutoff, cutoff]);
      return Number(row?.deleted ?? 0);
    });
  }

  /** The groups' (a JSON array of ids) current statuses, history since `since` (at most `maxPoints` a series) and uptime at `at`. */
  async read(groupIds: string, since: string, at: string, maxPoints: number): Promise<StatusRows> {
    const em = () => this.orm.em.fork();
    const [current, history, uptime] = await Promise.all([
      em().execute<StatusRows['current']>(CURRENT_SQL, [groupIds]),
      em().execute<StatusRows['history']>(HISTORY_SQL, [groupIds, since, at, maxPoints]),
      em().execute<StatusRows['uptime']>(UPTIME_SQL, [groupIds, at, at, at, at, at]),
    ]);
    return { current, history, uptime };
  }
}
