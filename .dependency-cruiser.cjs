// Module boundaries (ARCHITECTURE.md, docs/architecture.md). `npm run lint` cruises src and the
// code that drives it (test, sdk, scripts, bench, bin); the boundary rules apply to src.
// - No import cycle anywhere, type-only imports included, and no exceptions.
// - A module imports only platform/, pages/, the root's types and other modules' index.ts.
// - Outside modules/ a module is reached through its index.ts too; database.ts alone reads the
//   *.table.ts files, to compose the schema Kysely sees. A table file therefore imports no other
//   module (that would close a cycle through database.ts).
// - platform/ imports no module, no page and nothing at src/'s root but config.ts.
// - HTTP and page code see services only: no repository (SQL) or table file.
// - A module's index.ts exports no repository function.
// - packages/node (@kurus/node, published alone) imports nothing of the repository outside it.
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, type-only imports included, and no carve-out.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-imports-no-module',
      comment: 'platform/ is cross-cutting: it imports no module, page or composition file.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: {
        path: '^src/(modules/|pages/|[^/]+\\.ts$)',
        pathNot: '^src/config\\.ts$',
      },
    },
    {
      name: 'modules-only-through-index',
      comment: "A module imports another module's index.ts only.",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/([^/]+)/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'outside-modules-only-through-index',
      comment: "Code outside modules/ imports a module's index.ts only (database.ts: its tables).",
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/modules/', '^src/database\\.ts$'] },
      to: { path: '^src/modules/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'database-reads-tables-only',
      comment:
        'database.ts composes the table types and the ports Deps carries (a *.port.ts that imports nothing of ours), nothing else of a module.',
      severity: 'error',
      from: { path: '^src/database\\.ts$' },
      to: { path: '^src/modules/', pathNot: '^src/modules/[^/]+/[^/]+\\.(table|port)\\.ts$' },
    },
    {
      name: 'http-sees-services-only',
      comment: 'HTTP and page code call services; SQL and row types stay below them.',
      severity: 'error',
      from: { path: '^src/.+\\.(http|pages|web)\\.ts$' },
      to: { path: '\\.(repository|table)\\.ts$' },
    },
    {
      name: 'index-exports-no-repository',
      comment: "A module's surface is its services, never its SQL.",
      severity: 'error',
      from: { path: '^src/modules/[^/]+/index\\.ts$' },
      to: { path: '\\.repository\\.ts$' },
    },
    {
      name: 'sdk-package-self-contained',
      comment:
        '@kurus/node is published alone: its source imports only itself, Node and its own dependencies.',
      severity: 'error',
      from: { path: '^packages/node/src/' },
      to: { pathNot: ['^packages/node/src/', '^node_modules/'], dependencyTypesNot: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // What `npm pack` compiles (packages/*/dist) is the source again.
    exclude: { path: '^packages/[^/]+/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
