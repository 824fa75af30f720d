import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_accounts } from './Migration20261122000000_accounts.js';
import { Migration20261122010000_catalog_billing } from './Migration20261122010000_catalog_billing.js';
import { Migration20261122020000_usage_events } from './Migration20261122020000_usage_events.js';
import { Migration20261122030000_video_tasks } from './Migration20261122030000_video_tasks.js';
import { Migration20261122040000_service_status } from './Migration20261122040000_service_status.js';
import { Migration20261122050000_announcements } from './Migration20261122050000_announcements.js';
import { Migration20261122060000_usage_rollups } from './Migration20261122060000_usage_rollups.js';
import { Migration20261122070000_payments } from './Migration20261122070000_payments.js';
import { Migration20261122080000_identity } from './Migration20261122080000_identity.js';
import { Migration20261122090000_messenger_login } from './Migration20261122090000_messenger_login.js';
import { Migration20261123000000_announcement_order } from './Migration20261123000000_announcement_order.js';
import { Migration20261124000000_responses } from './Migration20261124000000_responses.js';
import { Migration20261124110000_account_concurrency } from './Migration20261124110000_account_concurrency.js';
import { Migration20261124120000_wallet_epochs } from './Migration20261124120000_wallet_epochs.js';
import { Migration20261124130000_video_inputs } from './Migration20261124130000_video_inputs.js';
import { Migration20261125000000_usage_write_path } from './Migration20261125000000_usage_write_path.js';
import { Migration20261129000000_webhooks } from './Migration20261129000000_webhooks.js';
import { Migration20261128100000_upstream_cost } from './Migration20261128100000_upstream_cost.js';
import { Migration20261128000000_upstreams } from './Migration20261128000000_upstreams.js';
import { Migration20261129100000_alerts } from './Migration20261129100000_alerts.js';
import { Migration20261130000000_usage_partitions } from './Migration20261130000000_usage_partitions.js';
import { Migration20261129500000_organizations } from './Migration20261129500000_organizations.js';

/**
 * Every migration, in order. Listed explicitly (not globbed from disk) so the same list runs from the
 * compiled build and from the TypeScript sources under test.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000_accounts', class: Migration20261122000000_accounts },
  { name: 'Migration20261122010000_catalog_billing', class: Migration20261122010000_catalog_billing },
  { name: 'Migration20261122020000_usage_events', class: Migration20261122020000_usage_events },
  { name: 'Migration20261122030000_video_tasks', class: Migration20261122030000_video_tasks },
  { name: 'Migration20261122040000_service_status', class: Migration20261122040000_service_status },
  { name: 'Migration20261122050000_announcements', class: Migration20261122050000_announcements },
  { name: 'Migration20261122060000_usage_rollups', class: Migration20261122060000_usage_rollups },
  { name: 'Migration20261122070000_payments', class: Migration20261122070000_payments },
  { name: 'Migration20261122080000_identity', class: Migration20261122080000_identity },
  { name: 'Migration20261122090000_messenger_login', class: Migration20261122090000_messenger_login },
  { name: 'Migration20261123000000_announcement_order', class: Migration20261123000000_announcement_order },
  { name: 'Migration20261124000000_responses', class: Migration20261124000000_responses },
  { name: 'Migration20261124110000_account_concurrency', class: Migration20261124110000_account_concurrency },
  { name: 'Migration20261124120000_wallet_epochs', class: Migration20261124120000_wallet_epochs },
  { name: 'Migration20261124130000_video_inputs', class: Migration20261124130000_video_inputs },
  { name: 'Migration20261125000000_usage_write_path', class: Migration20261125000000_usage_write_path },
  { name: 'Migration20261128000000_upstreams', class: Migration20261128000000_upstreams },
  { name: 'Migration20261128100000_upstream_cost', class: Migration20261128100000_upstream_cost },
  { name: 'Migration20261129000000_webhooks', class: Migration20261129000000_webhooks },
  { name: 'Migration20261129100000_alerts', class: Migration20261129100000_alerts },
  { name: 'Migration20261129500000_organizations', class: Migration20261129500000_organizations },
  { name: 'Migration20261130000000_usage_partitions', class: Migration20261130000000_usage_partitions },
];
