// `npm run package`: type-check, bundle fixloop and its Python dependencies into bundled/ (pip install
// --target, see bundle_python.py), bundle the extension into dist/, and write dist/fixloop.vsix.
// The .vsix targets this machine's platform when the bundle holds compiled code (vsce --target).
//   FIXLOOP_BUNDLE_PYTHON=/path/to/python3.11+   the interpreter that runs pip (default: python3)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = process.execPath;
const python = process.env.FIXLOOP_BUNDLE_PYTHON || (process.platform === 'win32' ? 'python' : 'python3');

function run(command, args) {
  console.log(`+ ${[command, ...args].join(' ')}`);
  execFileSync(command, args, { cwd: root, stdio: 'inherit' });
}

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
run(node, [tsc, '--noEmit', '-p', '.']);
run(node, [tsc, '--noEmit', '-p', 'test']);
run(python, ['scripts/bundle_python.py']);
run(node, ['esbuild.mjs', '--production']);
const manifest = JSON.parse(readFileSync(join(root, 'bundled', 'native', 'manifest.json'), 'utf8'));
// vsce's secret scan would read each of the ~3,500 bundled third-party files (about 1.5 CPU-minutes);
// the extension's own files are dist/extension.js, package.json, README, LICENSE and the launcher.
const target = manifest.packages.length ? ['--target', manifest.platform] : [];
run(node, [join(root, 'node_modules', '@vscode', 'vsce', 'vsce'), 'package', '--no-dependencies', '--allow-package-all-secrets', ...target, '-o', 'dist/fixloop.vsix']);
