// Bundles the extension (and vscode-languageclient) into dist/extension.js; `--production` minifies.
import { build } from 'esbuild';

const production = process.argv.includes('--production');

if (process.argv.includes('--tests')) {
  // the unit tests of the parts that don't need VS Code, for `node --test`
  const { readdirSync } = await import('node:fs');
  await build({
    entryPoints: readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`),
    bundle: true,
    outdir: 'out/test',
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  process.exit(0);
}

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
});
