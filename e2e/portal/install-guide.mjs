// Applies docs/install.md to a portal by running its marked code blocks, so the
// guide and the test cannot drift. A block is marked by its fence's info string:
//
//   ```sh install                        run with bash -euo pipefail in the portal's root
//   ```ts backend                        inserted before `backend.start();` in
//                                        packages/backend/src/index.ts
//   ```tsx app                           the new frontend system's App.tsx: its imports go
//                                        on top, the entries of its `features: [...]` are
//                                        appended to the app's own features
//   ```tsx legacy-app <file>             the legacy app's <file> (packages/app/... of the
//                                        guide is packages/app-legacy/... here): imports on
//                                        top, the element inserted at the file's place for it
//   ```yaml app-config                   merged, in order, into app-config.rackside.yaml
//
// Blocks with any other info string (plain ```ts, ```yaml) are prose and not run.
// Plain ESM, Node 22+.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

/** The fenced code blocks of a Markdown document: `{ info, code, line }`. */
export function codeBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
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
    });
  }
  return blocks;
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

/** Deep merge as Backstage merges config files: objects merged, everything else replaced. */
function mergeConfig(a, b) {
  if (
    a &&
    b &&
    typeof a === 'object' &&
    typeof b === 'object' &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const out = { ...a };
    for (const [k, v] of Object.entries(b))
      out[k] = k in a ? mergeConfig(a[k], v) : v;
    return out;
  }
  return b;
}

/**
 * Runs the guide's marked blocks in `dir` (a create-app portal with the legacy
 * app as packages/app-legacy). `env` is given to the shell blocks. Answers
 * `{ counts, appConfig }`: how many blocks of each kind ran, and the file the
 * app-config blocks were merged into.
 */
export function applyInstallGuide(dir, { doc, env = {}, log = () => {} }) {
  const counts = {};
  let appConfig = {};
  for (const block of codeBlocks(fs.readFileSync(doc, 'utf8'))) {
    const [lang, kind, target] = block.info.split(/\s+/);
    const where = `${path.basename(doc)}:${block.line} (${block.info})`;
    const key = `${lang} ${kind ?? ''}`.trim();
    try {
      if (lang === 'sh' && kind === 'install') {
        log(`running ${where}`);
        execFileSync('bash', ['-euo', 'pipefail', '-c', block.code], {
          cwd: dir,
          stdio: ['ignore', 'inherit', 'inherit'],
          env: { ...process.env, ...env },
        });
      } else if (lang === 'ts' && kind === 'backend') {
        editFile(path.join(dir, 'packages/backend/src/index.ts'), text =>
          insertBefore(text, 'backend.start();', block.code),
        );
      } else if (lang === 'tsx' && kind === 'app') {
        const features = /features:\s*\[([\s\S]*?)\]/.exec(block.code);
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
          return `${importLines(block.code).join('\n')}\n${text.replace(
            own[0],
            merged,
          )}`;
        });
      } else if (lang === 'tsx' && kind === 'legacy-app') {
        const anchor = LEGACY_ANCHORS[target];
        if (!anchor) throw new Error(`no place known for ${target}`);
        const element = withoutImports(block.code).replace(/;\s*$/, '');
        const file = path.join(
          dir,
          target.replace(/^packages\/app\//, 'packages/app-legacy/'),
        );
        editFile(file, text => {
          const inserted = insertBefore(text, anchor.before, element, anchor);
          return `${importLines(block.code).join('\n')}\n${inserted}`;
        });
      } else if (lang === 'yaml' && kind === 'app-config') {
        appConfig = mergeConfig(appConfig, YAML.parse(block.code));
      } else {
        continue;
      }
    } catch (error) {
      throw new Error(
        `docs/install.md block at ${where} failed: ${error.message}`,
        {
          cause: error,
        },
      );
    }
    counts[key] = (counts[key] ?? 0) + 1;
  }
  const appConfigFile = path.join(dir, 'app-config.rackside.yaml');
  fs.writeFileSync(appConfigFile, YAML.stringify(appConfig));
  return { counts, appConfig: appConfigFile };
}
