/**
 * Which way imports may point (docs/architecture.md, "Dependency rules"). `npm run lint:deps` checks
 * them; `npm test` runs it first, so CI fails on a new violation.
 */
const TRANSPORTS = ['^resolvers/', '^rest-shim/', '^src/trpc/'];

/**
 * The layers, bottom first. A module imports only itself and the layers below it: never up, never
 * sideways to a peer of its own layer. Each entry is a path pattern (a directory or a file).
 */
const LAYERS = [
  { name: 'shared', paths: ['^src/shared/'] },
  { name: 'infrastructure', paths: ['^src/ledger/', '^src/mail/', '^src/storage/', '^src/simulator/', '^src/metrics\\.ts$', '^src/readiness\\.ts$', '^migrations/', '^src/events/[^/]+\\.ts$'] },
  { name: 'catalog', paths: ['^src/catalog/'] },
  { name: 'upstreams', paths: ['^src/upstreams/'] },
  { name: 'billing', paths: ['^src/billing/'] },
  { name: 'keys', paths: ['^src/keys/'] },
  { name: 'accounts', paths: ['^src/accounts/'] },
  { name: 'organizations', paths: ['^src/organizations/'] },
  { name: 'account features', paths: ['^src/payments/', '^src/usage/', '^src/status/', '^src/announcements/', '^src/events/alerts/', '^src/events/webhooks/'] },
  { name: 'inference', paths: ['^src/inference/'] },
  { name: 'video', paths: ['^src/video/'] },
  { name: 'configuration', paths: ['^src/config\\.ts$'] },
  { name: 'the database', paths: ['^src/(db/|(entities|mikro-orm\\.config)\\.ts$)'] },
  { name: 'the service registry', paths: ['^src/services\\.ts$'] },
  { name: 'the request context', paths: ['^src/context\\.ts$'] },
  { name: 'transports', paths: [...TRANSPORTS, '^src/cabinet\\.ts$'] },
  { name: 'the websocket server', paths: ['^src/graphql-ws\\.ts$'] },
  {
    name: 'composition roots',
    paths: ['^src/(app|server|cluster|main|demo)\\.ts$', '^src/cli/'],
  },
];

/** Who builds the application, and so alone sees the whole `Config`; every other module takes its own settings. */
const CONFIG_READERS = ['^src/(app|server|cluster|main|demo|services|config)\\.ts$', '^src/cli/', '^src/db/'];

/** The paths of layers at or above `index`, leaving out `own` (a module may import itself). */
function sameOrAbove(index, own) {
  return LAYERS.slice(index).flatMap((layer) => layer.paths).filter((path) => path !== own);
}

const layerRules = LAYERS.flatMap((layer, index) =>
  layer.paths.map((own) => ({
    name: `layer-order:${layer.name}`,
    comment: `${own} stands in the layer "${layer.name}": it imports only itself and layers below (order in .dependency-cruiser.cjs).`,
    severity: 'error',
    from: { path: own },
    to: { path: sameOrAbove(index, own) },
  })),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'only-roots-read-config',
      comment: 'Services take their own settings objects; only the composition roots see the whole application Config.',
      severity: 'error',
      from: { pathNot: [...CONFIG_READERS, '^test/'] },
      to: { path: '^src/config\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'A circle makes modules impossible to read, test or load on their own (type-only imports count too).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'product-never-imports-tests',
      comment: 'What ships (dist) is built from src, resolvers, rest-shim and migrations only; test code is not shipped.',
      severity: 'error',
      from: { path: '^(src|resolvers|rest-shim|migrations)/' },
      to: { path: '^test/' },
    },
    ...TRANSPORTS.map((transport) => ({
      name: 'transports-are-independent',
      comment: 'GraphQL, REST and tRPC are thin, parallel skins over the same services: one never reaches into another.',
      severity: 'error',
      from: { path: transport },
      to: { path: TRANSPORTS.filter((other) => other !== transport) },
    })),
    {
      name: 'services-never-import-transports',
      comment: 'Domain code knows nothing of HTTP shapes; transports depend on services, never the reverse.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(app|graphql-ws|context)\.ts$', '^src/(trpc|cli)/'] },
      to: { path: TRANSPORTS },
    },
    {
      name: 'providers-never-import-client-translators',
      comment: 'Provider adapters speak the canonical (hub) format and upstreams only; client formats are translated elsewhere.',
      severity: 'error',
      from: { path: '^src/inference/providers/' },
      to: { path: '^src/inference/(formats/|client-formats)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|dist-bench|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'test/tsconfig.json' },
  },
};
