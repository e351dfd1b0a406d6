import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../../dist/web', import.meta.url));
/** Where `npm run dev:web` sends API calls: a running platform (npm start). */
const api = process.env['SWITCHYARD_URL'] ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root,
  plugins: [react()],
  resolve: { tsconfigPaths: true },
  build: {
    outDir,
    emptyOutDir: true,
    sourcemap: true,
    // The web benchmark reads it to tell the first load from what loads on demand.
    manifest: true,
    // The bundle budget is checked by `npm run bench -- web`; heavy parts load on demand.
    chunkSizeWarningLimit: 600,
  },
  server: {
    port: Number(process.env['WEB_DEV_PORT'] ?? 5173),
    // The tool-record routes keep the seed's paths (/mcp/tool/...), outside /api.
    proxy: { '/api': { target: api, changeOrigin: false }, '/mcp/': { target: api, changeOrigin: false } },
  },
});
