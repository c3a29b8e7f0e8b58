// Applies docs/install.md to a portal by running its marked code blocks, so the
// guide and the test cannot drift. A block is marked by its fence's info string:
//
//   ```sh install                        run with bash -euo pipefail in the portal's root
//   ```sh install registry               the same, when the packages come from a registry
//   ```sh install air-gapped             the same, when they come from the release's tarballs
//   ```ts backend                        inserted before `backend.start();` in
//                                        packages/backend/src/index.ts
//   ```tsx app                           the new frontend system's App.tsx: its imports go
//                                        on top, the entries of its `features: [...]` are
//                                        appended to the app's own features
//   ```tsx legacy-app <file>             the legacy app's <file> (packages/app/... of the
//                                        guide is packages/app-legacy/... here): imports on
//                                        top, the element inserted at the file's place for it
//   ```yaml app-config                   merged, in order, into the portal's app-config.yaml
//                                        (a key the file has already is merged into, never
//                                        written a second time)
//   ```sh cluster                        the cluster's side (section 8: the chart from the
//                                        registry, the portal's token): run with bash
//                                        -euo pipefail by `applyClusterSteps`, against
//                                        the cluster KUBECONFIG names
//   ```<lang> example                    shown, not a step: an option or a variant
//
// Every block of the guide is marked: an unmarked or unknown mark fails `guideSteps`, so
// a step the guide adds cannot be skipped by the test without the test failing. Plain
// ESM, Node 22+.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

/** How the packages reach the portal: the qualifier of `sh install` blocks. */
export const SOURCES = ['registry', 'air-gapped'];

/**
 * The packages a plugin registers itself with or shares state through: two copies of
 * one of them split the portal (an API, route or service reference, an extension
 * point or the entity context made by one copy and looked up in the other, or the
 * backend's own services, like the HTTP router the signals backend needs WebSocket
 * handling of). The portal must end with one copy of each.
 */
export const FRAMEWORK_PACKAGES = [
  '@backstage/core-plugin-api',
  '@backstage/frontend-plugin-api',
  '@backstage/plugin-catalog-react',
  '@backstage/plugin-permission-react',
  '@backstage/plugin-signals-react',
  '@backstage/backend-plugin-api',
  '@backstage/backend-defaults',
  '@backstage/plugin-catalog-node',
  '@backstage/plugin-permission-node',
  '@backstage/plugin-signals-node',
  '@backstage/plugin-notifications-node',
  '@backstage/plugin-events-node',
];

/**
 * A second copy that is Backstage's and not the portal's to fix: the packages
 * whose newest release on the registry still asks for the older line, for each
 * framework package. This repository's own yarn.lock holds the same two.
 * - `@backstage/app-defaults` 1.7.12 (the legacy frontend system's createApp)
 *   asks `@backstage/frontend-plugin-api ^0.18.1`; only the legacy app uses it.
 * - `@backstage/plugin-events-backend` 0.6.6 asks `@backstage/plugin-events-node
 *   ^0.4.26` where backend-defaults 0.19 asks ^0.5.0; the events service is
 *   found by its id, which both copies share.
 * When a newer release of one of them asks for the current line, its entry
 * here stops mattering and goes.
 */
export const TOLERATED_COPIES = {
  '@backstage/frontend-plugin-api': ['@backstage/app-defaults'],
  '@backstage/plugin-events-node': ['@backstage/plugin-events-backend'],
};

/** The fenced code blocks of a Markdown document: `{ info, code, line, section }`. */
export function codeBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## (.*)$/.exec(lines[i]);
    if (heading) section = heading[1].trim();
    const open = /^```(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) {
      body.push(lines[i]);
    }
    blocks.push({
      info: open[1].trim(),
      code: body.join('\n'),
      line: start + 1,
      section,
    });
  }
  return blocks;
}

const RUN_KINDS = {
  sh: ['install', 'cluster'],
  ts: ['backend'],
  tsx: ['app', 'legacy-app'],
  yaml: ['app-config'],
};

/**
 * Every block of the guide with what the test does with it: `run` (a step in the
 * portal, in this order), `cluster` (a step against the cluster: `sh cluster`),
 * `other-source` (a step for the other way of getting the packages) or `example`.
 * Throws, naming each block, when a block is unmarked or marked with a kind the
 * runner does not know.
 */
export function guideSteps(
  markdown,
  { source = 'registry', doc = 'install.md' } = {},
) {
  if (!SOURCES.includes(source)) throw new Error(`unknown source ${source}`);
  const problems = [];
  const steps = codeBlocks(markdown).map(block => {
    const [lang, kind, target] = block.info.split(/\s+/);
    const where = `${doc}:${block.line} (\`\`\`${block.info})`;
    let role;
    if (kind === 'example') role = 'example';
    else if (!kind) {
      problems.push(
        `${where} is not marked: a step (${Object.entries(RUN_KINDS)
          .map(([l, ks]) => ks.map(k => `${l} ${k}`).join(', '))
          .join(', ')}) or \`${lang || '<lang>'} example\``,
      );
    } else if (!RUN_KINDS[lang]?.includes(kind)) {
      problems.push(`${where}: the test runs no \`${lang} ${kind}\` block`);
    } else if (lang === 'sh' && kind === 'cluster') {
      if (target) problems.push(`${where}: \`sh cluster\` takes no qualifier`);
      else role = 'cluster';
    } else if (lang === 'sh' && target && !SOURCES.includes(target)) {
      problems.push(`${where}: \`sh install\` for an unknown source ${target}`);
    } else if (lang === 'sh' && target && target !== source) {
      role = 'other-source';
    } else role = 'run';
    return { ...block, lang, kind, target, where, role };
  });
  if (problems.length > 0) {
    throw new Error(
      `docs/install.md has blocks the test would not run:\n  ${problems.join(
        '\n  ',
      )}`,
    );
  }
  return steps;
}

/**
 * Where each legacy-app file takes its element: the text the element goes
 * before (create-app's legacy template).
 */
const LEGACY_ANCHORS = {
  'packages/app/src/App.tsx': { before: '</FlatRoutes>' },
  // The sidebar's menu group, after its last item.
  'packages/app/src/components/Root/Root.tsx': {
    before: '{/* End global nav */}',
  },
  // The entity page create-app shows Resources with.
  'packages/app/src/components/catalog/EntityPage.tsx': {
    after: 'const defaultEntityPage = (',
    before: '</EntityLayout>',
  },
};

const importLines = code =>
  code.match(/^import[\s\S]*?from\s+['"][^'"]+['"];?\s*$/gm) ?? [];

function withoutImports(code) {
  let rest = code;
  for (const imp of importLines(code)) rest = rest.replace(imp, '');
  return rest.trim();
}

function insertBefore(text, anchor, insert, { after } = {}) {
  const from = after ? text.indexOf(after) : 0;
  if (from < 0) throw new Error(`anchor ${JSON.stringify(after)} not found`);
  const at = text.indexOf(anchor, from);
  if (at < 0) throw new Error(`anchor ${JSON.stringify(anchor)} not found`);
  const lineStart = text.lastIndexOf('\n', at) + 1;
  return `${text.slice(0, lineStart)}${insert}\n${text.slice(lineStart)}`;
}

function editFile(file, change) {
  fs.writeFileSync(file, change(fs.readFileSync(file, 'utf8')));
}

/**
 * Merges a YAML block into a YAML document as Backstage merges config files
 * (maps merged key by key, everything else replaced), in place: a key the
 * document has is merged into, so the file never holds it twice; the block's
 * comments come along.
 */
export function mergeYaml(document, block) {
  const merge = (target, from) => {
    for (const pair of from.items) {
      const key = YAML.isScalar(pair.key) ? pair.key.value : pair.key;
      const have = target.get(key, true);
      if (YAML.isMap(have) && YAML.isMap(pair.value)) merge(have, pair.value);
      else target.set(key, pair.value);
    }
  };
  if (!YAML.isMap(block.contents)) throw new Error('the block is not a map');
  if (!YAML.isMap(document.contents)) document.contents = block.contents;
  else merge(document.contents, block.contents);
  return document;
}

/** Parses YAML as Backstage's config loader does: a key given twice is an error. */
function parseStrict(text, what) {
  const document = YAML.parseDocument(text, { uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new Error(`${what}: ${document.errors[0].message}`);
  }
  return document;
}

function runShell(script, { dir, env }) {
  execFileSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ...env },
  });
}

/**
 * Runs the guide's steps in `dir` (a create-app portal with the legacy app as
 * packages/app-legacy), the packages coming from `source` ('registry' or
 * 'air-gapped'). `env` is given to the shell blocks; `shell(script, {dir, env})`
 * runs one (bash by default). Answers `{ counts, ran, appConfig }`: how many blocks
 * of each kind ran, the blocks that ran (`where`, in order), and the app-config
 * file the config blocks were merged into.
 */
export function applyInstallGuide(
  dir,
  {
    doc,
    markdown = fs.readFileSync(doc, 'utf8'),
    source = 'registry',
    env = {},
    shell = runShell,
    log = () => {},
  },
) {
  const counts = {};
  const ran = [];
  const appConfigFile = path.join(dir, 'app-config.yaml');
  const steps = guideSteps(markdown, {
    source,
    doc: path.basename(doc ?? 'install.md'),
  });
  for (const step of steps.filter(s => s.role === 'run')) {
    const { lang, kind, target, where } = step;
    try {
      if (lang === 'sh') {
        log(`running ${where}`);
        shell(step.code, { dir, env });
      } else if (lang === 'ts') {
        editFile(path.join(dir, 'packages/backend/src/index.ts'), text =>
          insertBefore(text, 'backend.start();', step.code),
        );
      } else if (kind === 'app') {
        const features = /features:\s*\[([\s\S]*?)\]/.exec(step.code);
        if (!features) throw new Error('no `features: [...]` in the block');
        const entries = features[1]
          .split('\n')
          .filter(l => !/^\s*\/\//.test(l))
          .join('\n')
          .trim();
        editFile(path.join(dir, 'packages/app/src/App.tsx'), text => {
          const own = /features:\s*\[([\s\S]*?)\]/.exec(text);
          if (!own)
            throw new Error("no `features: [...]` in the app's App.tsx");
          const merged = `features: [${own[1]
            .trim()
            .replace(/,$/, '')}, ${entries}]`;
          return `${importLines(step.code).join('\n')}\n${text.replace(
            own[0],
            merged,
          )}`;
        });
      } else if (kind === 'legacy-app') {
        const anchor = LEGACY_ANCHORS[target];
        if (!anchor) throw new Error(`no place known for ${target}`);
        const element = withoutImports(step.code).replace(/;\s*$/, '');
        const file = path.join(
          dir,
          target.replace(/^packages\/app\//, 'packages/app-legacy/'),
        );
        editFile(file, text => {
          const inserted = insertBefore(text, anchor.before, element, anchor);
          return `${importLines(step.code).join('\n')}\n${inserted}`;
        });
      } else if (kind === 'app-config') {
        editFile(appConfigFile, text => {
          const merged = mergeYaml(
            parseStrict(text, 'app-config.yaml'),
            parseStrict(step.code, 'the block'),
          ).toString();
          // What Backstage will read: still one document without a key given twice.
          parseStrict(merged, 'app-config.yaml after the merge');
          return merged;
        });
      }
    } catch (error) {
      throw new Error(
        `docs/install.md block at ${where} failed: ${error.message}`,
        {
          cause: error,
        },
      );
    }
    const key = `${lang} ${kind}`;
    counts[key] = (counts[key] ?? 0) + 1;
    ran.push(where);
  }
  return { counts, ran, appConfig: appConfigFile };
}

function runShellAsync(script, { dir, env }) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ...env },
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`bash exited with ${code ?? signal}`)),
    );
  });
}

/**
 * Runs the guide's `sh cluster` blocks (section 8), in order, in `dir` with `env`
 * (the cluster's KUBECONFIG, helm and kubectl on PATH, the blocks' variables).
 * `shell(script, {dir, env})` answers a promise (bash by default), so the caller
 * can play the parts of the cluster a simulated one lacks while a block waits.
 * Answers the blocks that ran (`where`, in order).
 */
export async function applyClusterSteps(
  dir,
  {
    doc,
    markdown = fs.readFileSync(doc, 'utf8'),
    env = {},
    shell = runShellAsync,
    log = () => {},
  },
) {
  const ran = [];
  const steps = guideSteps(markdown, {
    doc: path.basename(doc ?? 'install.md'),
  }).filter(s => s.role === 'cluster');
  for (const step of steps) {
    log(`running ${step.where}`);
    try {
      await shell(step.code, { dir, env });
    } catch (error) {
      throw new Error(
        `docs/install.md block at ${step.where} failed: ${error.message}`,
        { cause: error },
      );
    }
    ran.push(step.where);
  }
  return ran;
}

/**
 * What the test's own config may set on top of the guide's: where the portal
 * listens (the harness's port), which cluster it talks to (the simulated rack's,
 * in place of the guide's examples) and which of the test's two apps the backend
 * serves. Anything else would be a step the guide lacks.
 */
export const ENVIRONMENT_KEYS = [
  'app.baseUrl',
  'app.packageName',
  'backend.baseUrl',
  'backend.listen',
  'backend.cors',
  'servers.clusters',
];

/** The test's config keys that are not environment (empty when it adds no step). */
export function stepsInConfig(config) {
  const extra = [];
  const walk = (value, at) => {
    if (at && ENVIRONMENT_KEYS.includes(at)) return;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value))
        walk(v, at ? `${at}.${k}` : k);
    } else extra.push(at);
  };
  walk(config, '');
  return extra;
}

/**
 * The framework packages the portal holds more than one version of, from its
 * yarn.lock (what `yarn why` reads): `{ name: { version: [dependents] } }`,
 * leaving out copies only `TOLERATED_COPIES` ask for.
 */
export function frameworkCopies(lockText, packages = FRAMEWORK_PACKAGES) {
  const lock = YAML.parse(lockText);
  const versionOf = new Map();
  const nameOf = descriptor => descriptor.replace(/^(@?[^@]+)@.*$/, '$1');
  for (const [keys, entry] of Object.entries(lock)) {
    if (keys === '__metadata') continue;
    for (const descriptor of keys.split(/,\s*/)) {
      versionOf.set(descriptor.trim(), entry.version);
    }
  }
  const copies = {};
  for (const [keys, entry] of Object.entries(lock)) {
    if (keys === '__metadata') continue;
    const dependent = nameOf(keys.split(/,\s*/)[0]);
    for (const [dep, range] of Object.entries(entry.dependencies ?? {})) {
      if (!packages.includes(dep)) continue;
      const version = versionOf.get(`${dep}@${range}`);
      if (!version) continue;
      ((copies[dep] ??= {})[version] ??= new Set()).add(dependent);
    }
  }
  const duplicated = {};
  for (const [name, byVersion] of Object.entries(copies)) {
    const kept = Object.entries(byVersion).filter(
      ([, dependents]) =>
        ![...dependents].every(d => TOLERATED_COPIES[name]?.includes(d)),
    );
    if (Object.keys(byVersion).length > 1 && kept.length > 1) {
      duplicated[name] = Object.fromEntries(
        Object.entries(byVersion).map(([v, d]) => [v, [...d].sort()]),
      );
    }
  }
  return duplicated;
}
