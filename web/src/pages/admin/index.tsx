export { AdminAccounts } from './accounts.js';
export { AdminCatalog } from './catalog.js';
export { AdminAnnouncements } from './announcements.js';
export { AdminInvoices } from './invoices.js';
export { AdminProbes } from './probes.js';
export { AdminUpstreams } from './upstreams.js';
export { AdminMargin } from './margin.js';
