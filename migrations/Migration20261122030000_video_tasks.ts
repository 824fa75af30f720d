import { Migration } from '@mikro-orm/migrations';

/**
 * Video generation jobs (SPEC.md section 3, Video task). The row is the job's durable state: the
 * runner claims due rows with `FOR UPDATE SKIP LOCKED` and a lease, so a job is never processed twice
 * at once and survives restarts; every status change is a compare-and-set on `status`.
 */
export class Migration20261122030000_video_tasks extends Migration {
  override name = 'Migration20261122030000_video_tasks';

  override up(): void {
    this.addSql(`
      create table video_tasks (
        id text primary key,
        user_id uuid not null references users(id),
        api_key_id uuid null references api_keys(id),
        request_id text not null,
        model text not null,
        provider_family text not null,
        route_group text not null,
        spec jsonb not null,
        seconds integer not null,
        prices jsonb not null,
        cost_usd numeric(30,10) not null check (cost_usd >= 0),
        status text not null default 'queued' check (status in ('queued', 'in_progress', 'completed', 'failed')),
        progress integer not null default 0,
        upstream_id text null,
        upstream_task_id text null,
        error_code text null,
        error_message text null,
        attempts integer not null default 0,
        lease_owner text null,
        lease_until timestamptz null,
        next_run_at timestamptz not null default now(),
        deadline_at timestamptz not null,
        content_bytes bigint null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        started_at timestamptz null,
        completed_at timestamptz null
      )`);
    this.addSql(`create index video_tasks_due_idx on video_tasks (next_run_at) where status in ('queued', 'in_progress')`);
    this.addSql(`create index video_tasks_user_idx on video_tasks (user_id, created_at desc)`);
  }

  override down(): void {
    this.addSql('drop table if exists video_tasks');
  }
}
