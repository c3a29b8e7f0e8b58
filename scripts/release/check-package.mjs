// Checks a packed npm tarball (`yarn workspace NAME pack`) as a registry and a
// consumer's portal would meet it: the manifest is publishable (no
// `workspace:` ranges, public access, license, repository, files) and points
// only at files it ships, and every package its dist code or its .d.ts files
// import is one it declares (dependencies or peerDependencies; for types of a
// package that ships none, its @types package). Plain ESM, Node 22+.
//
//   node scripts/release/check-package.mjs dist/release/*.tgz   # prints problems, exit 1 if any
//   import { checkTarball } from './check-package.mjs'          // -> { name, problems: string[] }
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const LICENSE = 'Apache-2.0';
const BUILTINS = new Set(builtinModules);

/** The package a bare import names (`@scope/name/sub` -> `@scope/name`), or undefined for a relative or built-in one. */
export function packageOfSpecifier(spec) {
  if (
    spec.startsWith('.') ||
    spec.startsWith('/') ||
    spec.startsWith('node:')
  ) {
    return undefined;
  }
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return BUILTINS.has(name) ? undefined : name;
}

/** The module specifiers a JS or .d.ts source imports, requires or references. */
export function importsOf(source) {
  const found = new Set();
  const patterns = [
    /\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\/\/\/\s*<reference\s+types=['"]([^'"]+)['"]/g,
  ];
  // Comments may quote code (`import x from 'y'` in an example); drop them first.
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/(?!\/\s*<reference).*$/gm, '');
  for (const re of patterns) {
    for (const m of code.matchAll(re)) found.add(m[1]);
  }
  return [...found];
}

function walk(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** Every file path a manifest field points at (main, module, types, exports, typesVersions, configSchema). */
function pointedFiles(manifest) {
  const files = [];
  for (const key of ['main', 'module', 'types', 'typings', 'browser']) {
    if (typeof manifest[key] === 'string') files.push([key, manifest[key]]);
  }
  const visit = (where, value) => {
    if (typeof value === 'string') files.push([where, value]);
    else if (Array.isArray(value))
      value.forEach((v, i) => visit(`${where}[${i}]`, v));
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        // Backstage's `backstage` condition names the feature type, not a file.
        if (k !== 'backstage') visit(`${where}.${k}`, v);
      }
    }
  };
  visit('exports', manifest.exports);
  visit('typesVersions', manifest.typesVersions);
  if (typeof manifest.configSchema === 'string') {
    files.push(['configSchema', manifest.configSchema]);
  }
  return files;
}

/** Whether the installed package `name` (resolved from the repository) ships its own types. */
function shipsTypes(name) {
  const require = createRequire(path.join(ROOT, 'package.json'));
  let manifestPath;
  try {
    manifestPath = require.resolve(`${name}/package.json`);
  } catch {
    const main = require.resolve(name);
    let dir = path.dirname(main);
    while (!fs.existsSync(path.join(dir, 'package.json')))
      dir = path.dirname(dir);
    manifestPath = path.join(dir, 'package.json');
  }
  const m = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  if (m.types || m.typings) return true;
  if (JSON.stringify(m.exports ?? {}).includes('"types"')) return true;
  return fs.existsSync(path.join(path.dirname(manifestPath), 'index.d.ts'));
}

/**
 * Checks one tarball. `rootManifest` is the repository's package.json (its
 * `repository.url` is the one every package must carry). Answers
 * `{ name, version, problems }`.
 */
export function checkTarball(tgz, { rootManifest } = {}) {
  const root =
    rootManifest ??
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-pack-check-'));
  try {
    execFileSync('tar', ['-xzf', tgz, '-C', dir]);
    const pkgDir = path.join(dir, 'package');
    const manifest = JSON.parse(
      fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'),
    );
    const problems = [];
    const shipped = new Set(
      walk(pkgDir).map(f => path.relative(pkgDir, f).split(path.sep).join('/')),
    );
    const has = file =>
      shipped.has(path.posix.normalize(file.replace(/^\.\//, '')));

    // The manifest as published.
    if (manifest.private) problems.push('package.json: "private": true');
    if (manifest.publishConfig?.access !== 'public') {
      problems.push('package.json: publishConfig.access is not "public"');
    }
    if (manifest.license !== LICENSE) {
      problems.push(
        `package.json: license is ${JSON.stringify(
          manifest.license,
        )}, not ${LICENSE}`,
      );
    }
    if (![...shipped].some(f => /^LICEN[CS]E(\.|$)/i.test(f))) {
      problems.push('no LICENSE file in the tarball');
    }
    if (!Array.isArray(manifest.files) || manifest.files.length === 0) {
      problems.push('package.json: no "files" list');
    }
    const repo = manifest.repository;
    if (!repo || typeof repo !== 'object' || !repo.url || !repo.directory) {
      problems.push('package.json: repository needs type, url and directory');
    } else {
      if (root.repository?.url && repo.url !== root.repository.url) {
        problems.push(
          `package.json: repository.url ${repo.url} is not the repository's (${root.repository.url})`,
        );
      }
      const here = path.join(ROOT, repo.directory, 'package.json');
      const local = fs.existsSync(here)
        ? JSON.parse(fs.readFileSync(here, 'utf8'))
        : undefined;
      if (local?.name !== manifest.name) {
        problems.push(
          `package.json: repository.directory ${repo.directory} is not where ${manifest.name} lives`,
        );
      }
    }
    // Where a user reads about it and reports a problem: the project's own pages.
    const project = root.repository?.url
      ?.replace(/^git\+/, '')
      .replace(/\.git$/, '');
    for (const [field, url] of [
      ['homepage', manifest.homepage],
      ['bugs.url', manifest.bugs?.url],
    ]) {
      if (typeof url !== 'string' || !url.startsWith('https://')) {
        problems.push(`package.json: no ${field}`);
      } else if (project && !url.startsWith(`${project}/`)) {
        problems.push(
          `package.json: ${field} ${url} is not under the repository's ${project}`,
        );
      }
    }
    const ranges = {
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.optionalDependencies,
    };
    for (const [dep, range] of Object.entries(ranges)) {
      if (/^(workspace|link|file|portal):/.test(range)) {
        problems.push(
          `package.json: ${dep} has the range ${range}, which no registry resolves`,
        );
      }
    }
    for (const [field, file] of pointedFiles(manifest)) {
      if (file.includes('*')) continue;
      if (!has(file))
        problems.push(
          `package.json: ${field} points at ${file}, which is not in the tarball`,
        );
    }

    // What the shipped code and types import.
    const declared = new Set([
      manifest.name,
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
    ]);
    const typesChecked = new Map();
    for (const file of [...shipped].sort()) {
      const isTypes = file.endsWith('.d.ts');
      const isCode = /\.(c|m)?js$/.test(file);
      if (!isTypes && !isCode) continue;
      const source = fs.readFileSync(path.join(pkgDir, file), 'utf8');
      for (const spec of importsOf(source)) {
        const name = packageOfSpecifier(spec);
        if (!name || spec.endsWith('.css')) continue;
        if (!declared.has(name)) {
          if (isTypes && declared.has(`@types/${name}`)) continue;
          problems.push(
            `${file} imports ${spec}, but ${name} is not a dependency or peer dependency`,
          );
          continue;
        }
        if (isTypes && !name.startsWith('@types/')) {
          if (!typesChecked.has(name)) {
            let own;
            try {
              own = shipsTypes(name);
            } catch {
              own = true; // not installed here; its declaration is what we can check
            }
            typesChecked.set(name, own);
          }
          if (!typesChecked.get(name)) {
            const atTypes = `@types/${name.replace(/^@([^/]+)\//, '$1__')}`;
            if (!declared.has(atTypes)) {
              problems.push(
                `${file} imports the types of ${name}, which ships none, and ${atTypes} is not a dependency`,
              );
            }
          }
        }
      }
    }
    return {
      name: manifest.name,
      version: manifest.version,
      problems: [...new Set(problems)],
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let bad = 0;
  for (const tgz of process.argv.slice(2)) {
    const { name, version, problems } = checkTarball(tgz);
    console.log(
      `${name}@${version}: ${
        problems.length === 0 ? 'ok' : `${problems.length} problem(s)`
      }`,
    );
    for (const p of problems) console.log(`  ${p}`);
    bad += problems.length;
  }
  process.exit(bad === 0 ? 0 : 1);
}
