/*
 * The import graph's rules (CONTRIBUTING.md, "Layers"), checked by `yarn deps:check` in
 * the test command: no import cycle in the product code, and no import from a lower
 * layer to a higher one. The layers, lowest first: servers-common (browser and server)
 * <- servers-node (backend and operator) <- the backend plugins and the operator; the
 * frontend never imports servers-node or anything of the server side.
 */
const PRODUCT = '^(plugins|packages)/[^/]+/src/';
// Tests and their helpers may reach across (an agreement test reads both sides, rack
// tests import rack-testing); the product code they test may not.
const TESTS =
  '(\\.test\\.tsx?$|/testing/|/__fixtures__/|/setupTests\\.ts$|/__testUtils__/|^packages/rack-testing/)';
// The backend plugin's folders (CONTRIBUTING.md, "Where backend code goes"): the shared
// folders every feature builds on, and the features, each a leaf.
const BACKEND = '^plugins/servers-backend/src/';
const BACKEND_SHARED = `${BACKEND}(cluster|access|preflight|approval|lib|schema)/`;
const BACKEND_FEATURES = `${BACKEND}(servers|plans|machines|approvals|notifications|actions)/`;
// A feature's service interface: the one file of a feature that the MCP actions and the
// notifications may call it through.
const BACKEND_SERVICE_INTERFACES = `${BACKEND}(servers/ServersService|plans/PlansService|machines/MachinesService)\\.ts$`;

module.exports = {
  forbidden: [
    {
      name: 'tests-stay-out-of-the-product',
      comment:
        'The rack and test helpers are not shipped: product code never imports them.',
      severity: 'error',
      from: { path: PRODUCT, pathNot: TESTS },
      to: { path: TESTS },
    },
    {
      name: 'no-cycle',
      comment:
        'A cycle means two modules are one: move what both need below them.',
      severity: 'error',
      from: { path: PRODUCT, pathNot: TESTS },
      to: { circular: true, pathNot: TESTS },
    },
    {
      name: 'common-stays-lowest',
      comment:
        'servers-common is shared by the browser and the server: it imports no other layer.',
      severity: 'error',
      from: { path: '^plugins/servers-common/', pathNot: TESTS },
      to: { path: '^(plugins|packages)/(?!servers-common/)' },
    },
    {
      name: 'node-below-backend-and-operator',
      comment:
        'servers-node is shared by the backend and the operator: it imports neither.',
      severity: 'error',
      from: { path: '^plugins/servers-node/', pathNot: TESTS },
      to: { path: '^(plugins|packages)/(?!servers-node/|servers-common/)' },
    },
    {
      name: 'frontend-never-server-side',
      comment: 'The browser bundle carries nothing of the server side.',
      severity: 'error',
      from: { path: '^(plugins/servers|packages/app)/', pathNot: TESTS },
      to: {
        path: '^(plugins/(servers-node|servers-backend|catalog-backend-module-servers|permission-backend-module-servers)|packages/(backend|operator))/',
      },
    },
    {
      name: 'plugins-not-the-apps',
      comment:
        'Plugins are installed into portals: they never import the demo apps or the operator.',
      severity: 'error',
      from: { path: '^plugins/', pathNot: TESTS },
      to: { path: '^packages/(app|backend|operator)/' },
    },
    {
      name: 'backend-shared-imports-no-feature',
      comment:
        'cluster/, access/, preflight/, approval/, lib/ and schema/ are what every backend feature builds on: they import no feature.',
      severity: 'error',
      from: { path: BACKEND_SHARED, pathNot: TESTS },
      to: { path: BACKEND_FEATURES },
    },
    {
      name: 'backend-features-are-leaves',
      comment:
        'servers/, plans/, machines/ and approvals/ import the shared folders, never another feature: what two features need goes into a shared folder (or is a port there).',
      severity: 'error',
      from: {
        path: `${BACKEND}(servers|plans|machines|approvals)/`,
        pathNot: TESTS,
      },
      to: { path: BACKEND_FEATURES, pathNot: `${BACKEND}$1/` },
    },
    {
      name: 'backend-edges-call-features-by-interface',
      comment:
        'actions/ (MCP) and notifications/ are features too: they import the shared folders, and call another feature only through its service interface.',
      severity: 'error',
      from: { path: `${BACKEND}(notifications|actions)/`, pathNot: TESTS },
      to: {
        path: BACKEND_FEATURES,
        pathNot: [`${BACKEND}$1/`, BACKEND_SERVICE_INTERFACES],
      },
    },
    {
      name: 'operator-not-the-backend',
      comment:
        'The operator shares with the backend through servers-node only.',
      severity: 'error',
      from: { path: '^packages/operator/', pathNot: TESTS },
      to: {
        path: '^(plugins/(servers-backend|servers)|packages/(app|backend))/',
      },
    },
    {
      name: 'operator-runtime-imports-no-kind',
      comment:
        "The operator's runtime/ is what every kind uses and is no kind: it imports no kind folder, nor operator.ts or config.ts above it.",
      severity: 'error',
      from: { path: '^packages/operator/src/runtime/', pathNot: TESTS },
      to: { path: '^packages/operator/src/(?!runtime/)' },
    },
    {
      name: 'operator-kinds-share-no-controller',
      comment:
        "A kind never imports another kind's controller: what two kinds share is a port (a type) or goes below them.",
      severity: 'error',
      from: { path: '^packages/operator/src/([^/]+)/', pathNot: TESTS },
      to: {
        path: '^packages/operator/src/[^/]+/controller\\.ts$',
        pathNot: '^packages/operator/src/$1/',
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|dist-types|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: true,
    preserveSymlinks: false,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['main', 'types'],
    },
  },
};
