/** Bundles src/server.ts into one self-contained CommonJS file (default: dist/server.cjs); its path. */
export function buildOfficeServer(outfile?: string): Promise<string>;
