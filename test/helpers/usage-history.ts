/**
 * A long usage history for one account, written straight into the database: `events` usage events spread
 * evenly over the last 30 days across five models (one in fifty an error), and the hourly rollups the batch
 * writer would have kept for them. For what must stay fast on a big account (the usage bench, the
 * cabinet's dashboard), not for billing: no ledger rows, balances untouched.
 */
export async function seedUsageHistory(query: (sql: string, params: unknown[]) => Promise<unknown>, userId: string, events: number): Promise<void> {
  await query(
    `insert into usage_events (id, user_id, request_id, client_surface, created_at, completed_at, provider_family, route_group, route_group_label,
                               endpoint, model, status, latency_ms, prompt_tokens, completion_tokens, cache_read_tokens, total_tokens,
                               public_input_usd_per_1m, public_output_usd_per_1m, amount_usd, official_cost_usd, saved_usd)
     select gen_random_uuid(), $1, 'req-' || g, 'api', ts, ts, 'family_a', 'cheap', 'Cheap', '/v1/chat/completions',
            (array['gen-5.6-luna','gen-5.6-terra','gen-5.6-sol','zeta-5.2','eta-k3'])[1 + g % 5],
            case when g % 50 = 0 then 'error' else 'success' end, 300, 1000 + g % 700, 200 + g % 300, g % 400, 1200 + g % 700 + g % 300,
            0.016, 0.04, 0.00002 + (g % 100) * 0.0000001, 0.0002, 0.00018
       from generate_series(1, $2::int) as g, lateral (select now() - (g::float / $2::int * interval '30 days') as ts) t`,
    [userId, events],
  );
  await query(
    `insert into usage_hourly
     select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family, count(*), sum(amount_usd),
            coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
            count(official_cost_usd), coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0), coalesce(sum(official_cost_usd), 0)
       from usage_events where user_id = $1 group by 1, 2, 3, 4, 5`,
    [userId],
  );
  await query('analyze usage_events; analyze usage_hourly', []);
}
