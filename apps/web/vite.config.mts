import { fileURLToPath } from 'node:url';
import { defineConfig, parseAst, runnerImport, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../../dist/web', import.meta.url));
/** Where `npm run dev:web` sends API calls: a running platform (npm start). */
const api = process.env['SWITCHYARD_URL'] ?? 'http://127.0.0.1:3000';

/**
 * `virtual:switchyard/routes`: the contract's route table as plain data (method, path, media types;
 * see `routeIndexOf`), computed here in Node so the console's bundle carries no route schemas.
 */
function routeIndexPlugin(): Plugin {
  const id = 'virtual:switchyard/routes';
  const http = fileURLToPath(new URL('../../libs/contracts/src/http.ts', import.meta.url));
  return {
    name: 'switchyard-route-index',
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    async load(module) {
      if (module !== `\0${id}`) return undefined;
      // The contract's TypeScript, run in Node by Vite's module runner (configFile: false: not this
      // config again); a change to it reloads the page in `npm run dev:web`.
      const { module: contract, dependencies } = await runnerImport<
        typeof import('../../libs/contracts/src/http')
      >(http, { configFile: false, logLevel: 'error' });
      for (const file of dependencies) this.addWatchFile(file);
      return `export default ${JSON.stringify(contract.routeIndexOf(contract.Routes))};\n`;
    },
  };
}

/** Initializers that build nothing: wrapping them would only add noise. */
const INERT = new Set(['Literal', 'Identifier', 'ArrowFunctionExpression', 'FunctionExpression']);

/**
 * Lets the console's bundle leave out the contract's schemas it never reads. Building a zod schema
 * has no effect beyond the schema, but a bundler cannot know that of `Base.extend({...})`, so every
 * schema of every module the console touched was kept and built as the page loaded: most of the
 * main bundle's start-up time on a slow machine. Each top-level `const` of libs/contracts and
 * libs/plan is wrapped in a call marked pure (`manualPureFunctions` covers the `z.…` chains inside):
 * one nothing reads is dropped, one something reads is built as before, in the same order.
 * Those libraries' top-level constants are schemas, tables and regexps, built for their value only.
 */
function pureContractsPlugin(): Plugin {
  const roots = ['libs/contracts/src/', 'libs/plan/src/'].map((dir) =>
    fileURLToPath(new URL(`../../${dir}`, import.meta.url)),
  );
  return {
    name: 'switchyard-pure-contracts',
    apply: 'build',
    enforce: 'post',
    transform(code, id) {
      if (!roots.some((root) => id.startsWith(root))) return undefined;
      const cuts: Array<[at: number, text: string]> = [];
      for (const statement of parseAst(code).body) {
        const decl = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
        if (decl?.type !== 'VariableDeclaration' || decl.kind !== 'const') continue;
        for (const { init } of decl.declarations) {
          if (!init || INERT.has(init.type)) continue;
          const { start, end } = init as unknown as { start: number; end: number };
          cuts.push([start, '/* @__PURE__ */ (() => ('], [end, '))()']);
        }
      }
      if (!cuts.length) return undefined;
      let out = code;
      for (const [at, text] of cuts.reverse()) out = out.slice(0, at) + text + out.slice(at);
      // Insertions within lines: the sourcemap before this step still points at the right lines.
      return { code: out, map: null };
    },
  };
}

export default defineConfig({
  root,
  plugins: [react(), routeIndexPlugin(), pureContractsPlugin()],
  resolve: { tsconfigPaths: true },
  build: {
    outDir,
    emptyOutDir: true,
    sourcemap: true,
    // The web benchmark reads it to tell the first load from what loads on demand.
    manifest: true,
    // The bundle budget is checked by `npm run bench -- web`; heavy parts load on demand.
    chunkSizeWarningLimit: 600,
    rolldownOptions: {
      // Building a zod schema has no effect but the schema: one nothing uses can go.
      treeshake: { manualPureFunctions: ['z'] },
    },
  },
  server: {
    port: Number(process.env['WEB_DEV_PORT'] ?? 5173),
    // The tool-record routes keep the seed's paths (/mcp/tool/...), outside /api.
    proxy: { '/api': { target: api, changeOrigin: false }, '/mcp/': { target: api, changeOrigin: false } },
  },
});
