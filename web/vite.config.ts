import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const root = path.dirname(fileURLToPath(import.meta.url));
/** The budget for the JavaScript a first visit loads (entry chunk and its static imports), gzipped. */
const INITIAL_JS_BUDGET_KB = 250;

/**
 * Prints the initial JavaScript (what index.html loads before the first paint: the entry chunk and every
 * chunk it imports statically) gzipped, and fails the build past the budget. Lazy pages are listed apart.
 */
function initialJsBudget(): Plugin {
  return {
    name: 'baikal-initial-js-budget',
    apply: 'build',
    writeBundle(options, bundle) {
      const chunks = Object.values(bundle).filter((item) => item.type === 'chunk');
      const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
      const gz = (fileName: string) => gzipSync(readFileSync(path.join(options.dir!, fileName))).length;
      const initial = new Set<string>();
      const visit = (fileName: string) => {
        if (initial.has(fileName)) return;
        initial.add(fileName);
        for (const imported of byName.get(fileName)?.imports ?? []) visit(imported);
      };
      for (const chunk of chunks) if (chunk.isEntry && chunk.facadeModuleId?.endsWith('index.html')) visit(chunk.fileName);
      const initialBytes = [...initial].reduce((sum, fileName) => sum + gz(fileName), 0);
      const lazy = chunks.filter((chunk) => !initial.has(chunk.fileName)).reduce((sum, chunk) => sum + gz(chunk.fileName), 0);
      const kb = (bytes: number) => (bytes / 1024).toFixed(1);
      console.log(`cabinet: initial JavaScript ${kb(initialBytes)} KB gzipped (budget ${INITIAL_JS_BUDGET_KB} KB, ${initial.size} chunks); lazy chunks ${kb(lazy)} KB gzipped`);
      if (initialBytes > INITIAL_JS_BUDGET_KB * 1024) throw new Error(`initial JavaScript ${kb(initialBytes)} KB gzipped is over the ${INITIAL_JS_BUDGET_KB} KB budget`);
    },
  };
}

export default defineConfig({
  root,
  base: '/',
  logLevel: 'warn',
  plugins: [initialJsBudget()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Scripts only from our origin: no inline module preload polyfill.
    modulePreload: { polyfill: false },
    rollupOptions: { input: { index: path.join(root, 'index.html') } },
  },
  server: { proxy: { '/graphql': { target: 'http://127.0.0.1:8000', ws: true } } },
});
