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
      /** The chunks a page's entry loads before it runs (the entry and its static imports, transitively), or may load later too (`dynamic`). */
      const loadedBy = (page: string, dynamic = false) => {
        const files = new Set<string>();
        const visit = (fileName: string) => {
          if (files.has(fileName)) return;
          files.add(fileName);
          const chunk = byName.get(fileName);
          for (const imported of [...(chunk?.imports ?? []), ...(dynamic ? (chunk?.dynamicImports ?? []) : [])]) visit(imported);
        };
        for (const chunk of chunks) if (chunk.isEntry && chunk.facadeModuleId?.endsWith(page)) visit(chunk.fileName);
        return files;
      };
      const sum = (files: Iterable<string>) => [...files].reduce((total, fileName) => total + gz(fileName), 0);
      const initial = loadedBy('index.html');
      const explorer = [...loadedBy('graphiql.html', true)].filter((fileName) => !initial.has(fileName));
      const lazy = chunks.map((chunk) => chunk.fileName).filter((fileName) => !initial.has(fileName) && !explorer.includes(fileName));
      const initialBytes = sum(initial);
      const kb = (bytes: number) => (bytes / 1024).toFixed(1);
      console.log(`cabinet: initial JavaScript ${kb(initialBytes)} KB gzipped (budget ${INITIAL_JS_BUDGET_KB} KB, ${initial.size} chunks); lazy chunks ${kb(sum(lazy))} KB gzipped; GraphQL explorer (/graphql, its own page) ${kb(sum(explorer))} KB gzipped`);
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
    // The budget above is the size check that matters; GraphiQL's editor is one large chunk of its own page.
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      input: { index: path.join(root, 'index.html'), graphiql: path.join(root, 'graphiql.html') },
      // GraphiQL's dependencies mark modules "use client" (a React Server Components hint that means nothing in a browser bundle).
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: { proxy: { '/graphql': { target: 'http://127.0.0.1:8000', ws: true } } },
});
