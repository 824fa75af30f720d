/**
 * Which way imports may point (docs/architecture.md, "Dependency rules"). `npm run lint:deps` checks
 * them; `npm test` runs it first, so CI fails on a new violation.
 */
const TRANSPORTS = ['^resolvers/', '^rest-shim/', '^src/trpc/'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
      to: { path: '^src/inference/(translate/|client-formats|same-format)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|dist-bench|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'test/tsconfig.json' },
  },
};
