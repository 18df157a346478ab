// Builds the explorer's bundle: src/main.js (and the CSS it imports) into app.js and app.css,
// and index.html naming them with a hash of their bytes, so a browser may keep them for long.
// The output depends only on the sources and the pinned esbuild: the Go test
// explorer.TestBundleIsBuilt rebuilds into a temporary directory and compares bytes with the
// committed ../dist.
//
//   node build.mjs <outdir>
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, '..', 'dist'));

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  absWorkingDir: here,
  entryPoints: { app: 'src/main.js' },
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2022'],
  legalComments: 'eof',
  charset: 'utf8',
  outdir: out,
  logLevel: 'warning',
});

const hash = (name) => createHash('sha256').update(readFileSync(join(out, name))).digest('hex').slice(0, 16);
const html = readFileSync(join(here, 'src', 'index.html'), 'utf8')
  .replace('{{app.css}}', `app.css?h=${hash('app.css')}`)
  .replace('{{app.js}}', `app.js?h=${hash('app.js')}`);
writeFileSync(join(out, 'index.html'), html);
