// `npm run package`: type-check, bundle fixloop and its Python dependencies (pip install --target, see
// bundle_python.py), bundle the extension into dist/, and write the .vsix files.
//   node scripts/package.mjs                       this machine's platform: bundled/ in place, dist/fixloop.vsix
//   node scripts/package.mjs --targets all         every platform and the universal package:
//                                                  dist/fixloop-<target>.vsix (linux-x64, linux-arm64,
//                                                  alpine-x64, darwin-x64, darwin-arm64, win32-x64, universal)
//   node scripts/package.mjs --targets win32-x64,universal --out DIR [--skip-typecheck]
// Each --targets package is staged in its own folder (DIR/stage/<target>) with its own bundled/, so one
// machine builds them all; the universal one bundles no Python and runs the fixloop installed in the
// interpreter (fixloop.serverPython or the selected one).
//   FIXLOOP_BUNDLE_PYTHON=/path/to/python3.11+   the interpreter that runs pip (default: python3)
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = process.execPath;
const python = process.env.FIXLOOP_BUNDLE_PYTHON || (process.platform === 'win32' ? 'python' : 'python3');
const ALL = ['linux-x64', 'linux-arm64', 'alpine-x64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'universal'];
// what the .vsix holds besides bundled/ (the rest is excluded by .vscodeignore)
const STAGED = ['package.json', 'README.md', 'LICENSE', '.vscodeignore', 'images/icon.png', 'dist/extension.js', 'bundled/tool'];

const { values } = parseArgs({
  options: {
    targets: { type: 'string' },
    out: { type: 'string' },
    'skip-typecheck': { type: 'boolean' },
    jobs: { type: 'string', default: '3' }, // packages zipped at once
  },
});

function run(command, args, cwd = root) {
  console.log(`+ ${[command, ...args].join(' ')}`);
  execFileSync(command, args, { cwd, stdio: 'inherit' });
}

// vsce's secret scan would read each of the ~3,500 bundled third-party files (about 1.5 CPU-minutes);
// the extension's own files are dist/extension.js, package.json, README, LICENSE and the launcher.
function vsceArgs(target, vsix) {
  const vsceBin = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  const targetArgs = target ? ['--target', target] : [];
  return [vsceBin, 'package', '--no-dependencies', '--allow-package-all-secrets', '--allow-missing-repository',
    ...targetArgs, '-o', vsix];
}

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!values['skip-typecheck']) {
  run(node, [tsc, '--noEmit', '-p', '.']);
  run(node, [tsc, '--noEmit', '-p', 'test']);
}
run(node, ['esbuild.mjs', '--production']);

if (!values.targets) {
  run(python, ['scripts/bundle_python.py']);
  const manifest = JSON.parse(readFileSync(join(root, 'bundled', 'native', 'manifest.json'), 'utf8'));
  run(node, vsceArgs(manifest.packages.length ? manifest.platform : '', 'dist/fixloop.vsix'));
} else {
  const targets = values.targets === 'all' ? ALL : values.targets.split(',');
  const out = resolve(values.out ?? join(root, 'dist'));
  const started = Date.now();
  for (const target of targets) {
    const stage = join(out, 'stage', target);
    rmSync(stage, { recursive: true, force: true });
    for (const path of STAGED) {
      mkdirSync(dirname(join(stage, path)), { recursive: true });
      cpSync(join(root, path), join(stage, path), { recursive: true });
    }
  }
  run(python, [join(root, 'scripts', 'bundle_python.py'), ...targets.flatMap((t) => ['--target', t]),
    '--out', join(out, 'stage', '{target}', 'bundled')]);
  console.log(`bundled ${targets.length} targets in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const pending = [...targets];
  async function packNext() {
    for (let target = pending.shift(); target; target = pending.shift()) {
      const packed = Date.now();
      const stage = join(out, 'stage', target);
      await promisify(execFile)(node, vsceArgs(target === 'universal' ? '' : target, join(out, `fixloop-${target}.vsix`)),
        { cwd: stage, maxBuffer: 64 * 1024 * 1024 });
      rmSync(stage, { recursive: true, force: true });
      console.log(`packed fixloop-${target}.vsix in ${((Date.now() - packed) / 1000).toFixed(1)} s`);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Number(values.jobs)) }, packNext));
  rmSync(join(out, 'stage'), { recursive: true, force: true });
  console.log(`built ${targets.length} packages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
