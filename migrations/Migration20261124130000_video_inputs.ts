import { Migration } from '@mikro-orm/migrations';

/**
 * A video task's large inputs (data: references) move out of `video_tasks.spec`, which every poll and
 * claim reads, into `video_task_inputs`: written once at submission, read once to pass them upstream,
 * deleted once the upstream has them or the task ends. Finished tasks lose the payloads they kept inline.
 */
export class Migration20261124130000_video_inputs extends Migration {
  override name = 'Migration20261124130000_video_inputs';

  override up(): void {
    this.addSql(`
      create table video_task_inputs (
        task_id text not null references video_tasks (id) on delete cascade,
        position int not null,
        url text not null,
        primary key (task_id, position)
      )`);
    // Active tasks keep theirs inline (the runner still reads those); finished ones need them no more.
    this.addSql(`
      update video_tasks
         set spec = jsonb_set(spec, '{references}', (
               select coalesce(jsonb_agg(case when r->>'url' like 'data:%' then jsonb_set(r, '{url}', 'null'::jsonb) else r end order by i), '[]'::jsonb)
                 from jsonb_array_elements(spec->'references') with ordinality as t(r, i)))
       where status in ('completed', 'failed') and jsonb_typeof(spec->'references') = 'array'
         and exists (select 1 from jsonb_array_elements(spec->'references') r where r->>'url' like 'data:%')`);
  }

  override down(): void {
    this.addSql(`drop table video_task_inputs`);
  }
}
