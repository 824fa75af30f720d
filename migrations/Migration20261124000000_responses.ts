import { Migration } from '@mikro-orm/migrations';

/**
 * Stored Responses (OpenAI's Responses state: `store: true`, `previous_response_id`, `item_reference`,
 * GET/DELETE /v1/responses/{id}). A response belongs to the account that made it and expires after
 * RESPONSES_TTL_DAYS; expired rows are invisible at once and purged in batches.
 *
 * `seq` orders responses by when they were written (the clock can give two the same millisecond), so
 * "the newest item with this id" is well defined. `previous_response_id` has no foreign key: the
 * response it continued may expire or be deleted first, and the later one stays readable.
 *
 * Bodies are `json`, not `jsonb`: they are only ever handed back, never queried inside, and `json`
 * keeps them byte for byte (key order included) and accepts the `\u0000` escape that `jsonb` refuses,
 * so a NUL in a client's text cannot make a response unstorable.
 */
export class Migration20261124000000_responses extends Migration {
  override name = 'Migration20261124000000_responses';

  override up(): void {
    this.addSql(`
      create table responses (
        id text primary key,
        seq bigserial not null,
        user_id uuid not null references users(id) on delete cascade,
        api_key_id uuid null references api_keys(id) on delete set null,
        model text not null,
        previous_response_id text null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        response json not null
      )`);
    this.addSql(`create index responses_expiry_idx on responses (expires_at)`);
    this.addSql(`create index responses_user_idx on responses (user_id, seq)`);
    // One row per item, input items first then output items, in the order of the conversation.
    // item ids are not unique (clients may resend an id), so lookups take the newest.
    this.addSql(`
      create table response_items (
        response_id text not null references responses(id) on delete cascade,
        user_id uuid not null,
        position integer not null,
        side text not null check (side in ('input', 'output')),
        item_id text null,
        item json not null,
        primary key (response_id, position)
      )`);
    this.addSql(`create index response_items_lookup_idx on response_items (user_id, item_id) where item_id is not null`);
  }

  override down(): void {
    this.addSql('drop table if exists response_items');
    this.addSql('drop table if exists responses');
  }
}
