// Module boundaries (ARCHITECTURE.md): a module imports only platform/ and other modules'
// index.ts; platform/ imports no module; only a module itself touches its repository and
// tables (database.ts composes the table types for Kysely).
module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-module',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/(modules/|app\\.ts|main\\.ts|server\\.ts)' },
    },
    {
      name: 'modules-only-through-index',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/([^/]+)/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'repository-and-tables-are-private',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/[^/]+/[^/]+\\.(repository|table)\\.ts$',
        pathNot: '^src/modules/$1/',
      },
    },
    {
      name: 'repository-and-tables-are-private-outside-modules',
      severity: 'error',
      from: { pathNot: ['^src/modules/', '^src/database\\.ts$'] },
      to: { path: '^src/modules/[^/]+/[^/]+\\.(repository|table)\\.ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: {
        circular: true,
        viaOnly: { pathNot: ['^src/database\\.ts$'] },
        dependencyTypesNot: ['type-only'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
