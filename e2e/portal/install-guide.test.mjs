// The install guide and its test agree (e2e/portal/install-guide.mjs): every
// block of docs/install.md is a step the test runs or is marked as not one, the
// steps run word for word, a doctored guide fails, and the test's own config
// adds no step. Runs in a second, with a small create-app-shaped portal and the
// shell steps recorded instead of run (install-guide.e2e.mjs runs them for real).
//
//   node --test e2e/portal/install-guide.test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, test } from 'node:test';
import YAML from 'yaml';
import {
  applyClusterSteps,
  applyInstallGuide,
  frameworkCopies,
  guideSteps,
  stepsInConfig,
} from './install-guide.mjs';

const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const DOC = path.join(ROOT, 'docs/install.md');
const GUIDE = fs.readFileSync(DOC, 'utf8');

/** The parts of a create-app 0.9.2 portal the guide edits, as create-app writes them. */
const PORTAL_FILES = {
  'packages/backend/src/index.ts': [
    "import { createBackend } from '@backstage/backend-defaults';",
    'const backend = createBackend();',
    "backend.add(import('@backstage/plugin-permission-backend'));",
    'backend.add(',
    "  import('@backstage/plugin-permission-backend-module-allow-all-policy'),",
    ');',
    'backend.start();',
    '',
  ].join('\n'),
  'packages/app/src/App.tsx': [
    "import { createApp } from '@backstage/frontend-defaults';",
    "import catalogPlugin from '@backstage/plugin-catalog/alpha';",
    'export default createApp({',
    '  features: [catalogPlugin, navModule, homeModule],',
    '});',
    '',
  ].join('\n'),
  'packages/app-legacy/src/App.tsx':
    '<FlatRoutes>\n  <Route path="/catalog" element={<CatalogIndexPage />} />\n</FlatRoutes>\n',
  'packages/app-legacy/src/components/Root/Root.tsx':
    '<SidebarGroup>\n  <SidebarItem to="catalog" text="Home" />\n  {/* End global nav */}\n</SidebarGroup>\n',
  'packages/app-legacy/src/components/catalog/EntityPage.tsx':
    'const defaultEntityPage = (\n  <EntityLayout>\n    <EntityLayout.Route path="/" title="Overview" />\n  </EntityLayout>\n);\n',
  'app-config.yaml': [
    'auth:',
    '  providers:',
    '    # See https://backstage.io/docs/auth/guest/provider',
    '    guest: {}',
    'catalog:',
    '  rules:',
    '    - allow: [Component, System, API, Resource, Location]',
    '  locations:',
    '    - type: file',
    '      target: ../../examples/org.yaml',
    'permission:',
    '  # setting this to `false` will disable permissions',
    '  enabled: true',
    '',
  ].join('\n'),
};

const dirs = [];
function portal() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-guide-'));
  dirs.push(dir);
  for (const [file, text] of Object.entries(PORTAL_FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0))
    fs.rmSync(dir, { recursive: true, force: true });
});

/** Applies a guide with its shell steps recorded; answers the result and the scripts. */
function apply(markdown, source = 'registry', dir = portal()) {
  const scripts = [];
  const result = applyInstallGuide(dir, {
    doc: DOC,
    markdown,
    source,
    shell: script => scripts.push(script),
  });
  return { ...result, scripts, dir };
}

/** The guide's `sh install` blocks for a source, found without the runner's parser. */
function shellBlocksOf(markdown, source) {
  const found = [];
  const re = /^```sh install( (\S+))?\n([\s\S]*?)\n```$/gm;
  for (let m; (m = re.exec(markdown)); ) {
    if (!m[2] || m[2] === source) found.push(m[3]);
  }
  return found;
}

/** The guide's `sh cluster` blocks, found without the runner's parser. */
function clusterBlocksOf(markdown) {
  return [...markdown.matchAll(/^```sh cluster\n([\s\S]*?)\n```$/gm)].map(
    m => m[1],
  );
}

/** Runs the guide's cluster steps with the shell recorded; answers the scripts. */
async function applyCluster(markdown) {
  const scripts = [];
  await applyClusterSteps(portal(), {
    doc: DOC,
    markdown,
    shell: async script => scripts.push(script),
  });
  return scripts;
}

describe('docs/install.md as it is', () => {
  for (const source of ['registry', 'air-gapped']) {
    test(`${source}: every shell step runs, word for word, in the guide's order`, () => {
      const { scripts } = apply(GUIDE, source);
      assert.deepEqual(scripts, shellBlocksOf(GUIDE, source));
      assert.ok(scripts.length >= 3, `${scripts.length} shell steps`);
    });
  }

  test('every block is a step, an example, or the cluster side', () => {
    const roles = guideSteps(GUIDE).map(s => s.role);
    assert.ok(roles.filter(r => r === 'run').length >= 10, roles.join(' '));
    assert.ok(roles.includes('other-source'));
    assert.ok(roles.includes('cluster'));
  });

  test("section 8's cluster steps run word for word, in order: the chart from the registry, then the portal's token", async () => {
    const scripts = await applyCluster(GUIDE);
    assert.deepEqual(scripts, clusterBlocksOf(GUIDE));
    assert.equal(scripts.length, 2);
    for (const step of guideSteps(GUIDE).filter(s => s.role === 'cluster'))
      assert.match(step.section, /^8\. /, step.where);
    assert.match(
      scripts[0],
      /^helm install rackside "\$RACKSIDE_CHART" --version "\$RACKSIDE_VERSION"/m,
    );
    assert.match(scripts[0], /\$\{RACKSIDE_PLAIN_HTTP:\+--plain-http\}/);
    assert.match(scripts[0], /--set backstage\.enabled=true/);
    assert.match(scripts[0], /^helm test rackside /m);
    assert.match(
      scripts[1],
      /create token rackside-backstage[\s\S]*plant-a-token[\s\S]*plant-a-ca\.crt/,
    );
    // The portal's own steps do not run them.
    const { scripts: portalScripts } = apply(GUIDE);
    for (const script of scripts) assert.ok(!portalScripts.includes(script));
  });

  test('bumps Backstage before adding Rackside, from the registry', () => {
    const { scripts } = apply(GUIDE, 'registry');
    assert.match(scripts[0], /^yarn up '@backstage\/\*'$/m);
    const scope = scripts.findIndex(s =>
      /npmScopes\.rackside\.npmRegistryServer/.test(s),
    );
    const add = scripts.findIndex(s => /yarn workspace backend add/.test(s));
    assert.ok(scope > 0 && add > scope, 'the scope line comes before the add');
    assert.match(scripts[add], /@rackside\/plugin-servers-backend/);
    assert.doesNotMatch(scripts.join('\n'), /resolutions|\.tgz/);
  });

  test('the first permission block names the create-app guest, merged into the keys the portal has', () => {
    const { dir, appConfig } = apply(GUIDE);
    const text = fs.readFileSync(appConfig, 'utf8');
    assert.equal(appConfig, path.join(dir, 'app-config.yaml'));
    // One key each: merged, not written a second time (Backstage refuses a duplicate key).
    for (const key of ['catalog', 'permission', 'servers', 'auth']) {
      assert.equal(text.match(new RegExp(`^${key}:`, 'gm'))?.length, 1, key);
    }
    const config = YAML.parse(text, { uniqueKeys: true });
    assert.deepEqual(config.permission.rackside.tiers, {
      admin: ['user:development/guest'],
    });
    assert.equal(config.permission.enabled, true);
    assert.ok(config.catalog.providers.rackside.owner);
    assert.equal(
      config.catalog.locations.length,
      1,
      "create-app's locations kept",
    );
    assert.deepEqual(
      config.auth.providers.guest,
      {},
      "create-app's guest sign-in untouched",
    );
    assert.match(
      text,
      /# See https:\/\/backstage.io\/docs\/auth\/guest\/provider/,
    );
    const backend = fs.readFileSync(
      path.join(dir, 'packages/backend/src/index.ts'),
      'utf8',
    );
    assert.match(
      backend,
      /^backend\.add\(import\('@rackside\/plugin-servers-backend'\)\);$/m,
    );
    assert.match(backend, /servers'\)\);\nbackend\.start\(\);\n$/);
  });
});

describe('a doctored guide fails', () => {
  test('a step whose mark is lost is named, not skipped', () => {
    const doctored = GUIDE.replace('```sh install registry\n', '```sh\n');
    const line = GUIDE.slice(
      0,
      GUIDE.indexOf('```sh install registry\n'),
    ).split('\n').length;
    assert.throws(
      () => apply(doctored),
      new RegExp(`install\\.md:${line} \\(\`\`\`sh\\) is not marked`),
    );
  });

  test('a mark the test does not run is named', () => {
    const doctored = GUIDE.replace(
      '```yaml app-config\n',
      '```yaml app-cofig\n',
    );
    assert.throws(
      () => apply(doctored),
      /the test runs no `yaml app-cofig` block/,
    );
  });

  test('a new unmarked block is named', () => {
    const doctored = GUIDE.replace(
      '## 2. Backend',
      '```sh\nyarn workspace backend add @example/extra\n```\n\n## 2. Backend',
    );
    assert.throws(() => apply(doctored), /is not marked/);
  });

  test('a cluster step whose mark is lost is named, not skipped', () => {
    const doctored = GUIDE.replace('```sh cluster\n', '```sh\n');
    const line = GUIDE.slice(0, GUIDE.indexOf('```sh cluster\n')).split(
      '\n',
    ).length;
    assert.throws(
      () => guideSteps(doctored),
      new RegExp(`install\\.md:${line} \\(\`\`\`sh\\) is not marked`),
    );
  });

  test('a changed cluster step is what runs', async () => {
    const doctored = GUIDE.replace(
      '--set backstage.enabled=true\nkubectl -n rackside-system rollout',
      '--set backstage.enabled=false\nkubectl -n rackside-system rollout',
    );
    assert.notEqual(doctored, GUIDE);
    const scripts = await applyCluster(doctored);
    assert.match(scripts[0], /backstage\.enabled=false/);
    assert.notDeepEqual(scripts, clusterBlocksOf(GUIDE));
  });

  test('a broken cluster step stops the run, naming its line', async () => {
    const doctored = GUIDE.replace(
      'RACKSIDE_CHART=${RACKSIDE_CHART:-oci://registry.example.com/charts/rackside}',
      'exit 9',
    );
    await assert.rejects(
      applyClusterSteps(portal(), { doc: DOC, markdown: doctored }),
      /install\.md:\d+ \(```sh cluster\) failed: bash exited with 9/,
    );
  });

  test('a broken shell step stops the run, naming its line', () => {
    const doctored = GUIDE.replace("yarn up '@backstage/*'", 'exit 7');
    const dir = portal();
    assert.throws(
      () => applyInstallGuide(dir, { doc: DOC, markdown: doctored }),
      /install\.md:\d+ \(```sh install\) failed: Command failed: bash/,
    );
  });

  test('a legacy-app block for a file the test has no place in is named', () => {
    const doctored = GUIDE.replace(
      '```tsx legacy-app packages/app/src/components/Root/Root.tsx',
      '```tsx legacy-app packages/app/src/components/Root/Sidebar.tsx',
    );
    assert.throws(
      () => apply(doctored),
      /no place known for packages\/app\/src\/components\/Root\/Sidebar\.tsx/,
    );
  });

  test('an app-config block with a key twice is refused, as Backstage refuses it', () => {
    const doctored = GUIDE.replace(
      '```yaml app-config\npermission:\n',
      '```yaml app-config\npermission: {}\npermission:\n',
    );
    assert.throws(() => apply(doctored), /the block: Map keys must be unique/);
  });
});

describe("the test's own config", () => {
  test('where the portal listens, the rack and which app it serves are not steps', () => {
    assert.deepEqual(
      stepsInConfig({
        app: { baseUrl: 'http://localhost:7040', packageName: 'app-legacy' },
        backend: {
          baseUrl: 'x',
          listen: { port: 7040 },
          cors: { origin: 'x' },
        },
        servers: { clusters: [{ name: 'plant-a' }] },
      }),
      [],
    );
  });

  test('a permission or a sign-in of its own is a step the guide lacks', () => {
    assert.deepEqual(
      stepsInConfig({
        auth: { providers: { guest: { userEntityRef: 'user:default/guest' } } },
        permission: {
          rackside: { tiers: { admin: ['group:default/guests'] } },
        },
        servers: { clusters: [], preflight: { secret: 's' } },
      }),
      [
        'auth.providers.guest.userEntityRef',
        'permission.rackside.tiers.admin',
        'servers.preflight.secret',
      ],
    );
  });
});

describe('framework copies, from yarn.lock', () => {
  const lock = entries =>
    YAML.stringify({ __metadata: { version: 8 }, ...entries });
  test('two versions of a framework package asked by portal packages are reported', () => {
    const copies = frameworkCopies(
      lock({
        'app@workspace:packages/app': {
          version: '0.0.0',
          dependencies: { '@backstage/frontend-plugin-api': 'npm:^0.18.1' },
        },
        '@rackside/plugin-servers@npm:0.1.0': {
          version: '0.1.0',
          dependencies: { '@backstage/frontend-plugin-api': 'npm:^1.0.0' },
        },
        '@backstage/frontend-plugin-api@npm:^0.18.1': { version: '0.18.1' },
        '@backstage/frontend-plugin-api@npm:^1.0.0': { version: '1.0.0' },
      }),
    );
    assert.deepEqual(copies, {
      '@backstage/frontend-plugin-api': {
        '0.18.1': ['app'],
        '1.0.0': ['@rackside/plugin-servers'],
      },
    });
  });

  test("the legacy app-defaults' own older copy is tolerated, one version is clean", () => {
    const entries = {
      '@backstage/app-defaults@npm:^1.7.12': {
        version: '1.7.12',
        dependencies: { '@backstage/frontend-plugin-api': 'npm:^0.18.1' },
      },
      '@rackside/plugin-servers@npm:0.1.0': {
        version: '0.1.0',
        dependencies: {
          '@backstage/frontend-plugin-api': 'npm:^1.0.0',
          '@backstage/plugin-catalog-react': 'npm:^4.0.0',
        },
      },
      'app@workspace:packages/app': {
        version: '0.0.0',
        dependencies: { '@backstage/plugin-catalog-react': 'npm:^4.0.0' },
      },
      '@backstage/frontend-plugin-api@npm:^0.18.1': { version: '0.18.1' },
      '@backstage/frontend-plugin-api@npm:^1.0.0': { version: '1.0.0' },
      '@backstage/plugin-catalog-react@npm:^4.0.0': { version: '4.0.0' },
    };
    assert.deepEqual(frameworkCopies(lock(entries)), {});
  });
});
