import { readFile, realpath } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  static as serveStatic,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';

/**
 * The policy of every response of the web client: scripts, styles and fonts from this origin only
 * (no inline script, no eval), API calls and streams to this origin only, never framed.
 */
export const WEB_CLIENT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/** Paths the web client never answers: the API, the seed's tool-record API, probes, metrics. */
const NOT_THE_CLIENT = ['/api', '/mcp', '/healthz', '/readyz', '/metrics'];

const IMMUTABLE = 'public, max-age=31536000, immutable';
const NO_CACHE = 'no-cache';

const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Switchyard: web client not built</title></head>
<body>
<h1>The web client is not built</h1>
<p>This gateway serves the admin web client from WEB_DIR (by default <code>dist/web</code>), which has no
<code>index.html</code>. Build it with <code>npm run build:web</code> (<code>npm start</code> does it too), then reload.</p>
<p>The API answers meanwhile: see <a href="/api/docs">/api/docs</a>.</p>
</body>
</html>
`;

/** Express matches routes case-insensitively, so the API's prefixes are compared the same way. */
function isReserved(path: string): boolean {
  const p = path.toLowerCase();
  return NOT_THE_CLIENT.some((prefix) => p === prefix || p.startsWith(`${prefix}/`));
}

function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || !(rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}

/**
 * The file a URL path names inside `dir`, or undefined for a path that could lead out of it (or
 * that no client file can have): bad percent-encoding, NUL, a backslash, a `.` or `..` segment
 * (encoded or not). Symlinks are followed only when they stay inside `dir`.
 */
async function fileFor(
  dir: string,
  realDir: string | undefined,
  urlPath: string,
): Promise<string | 'hostile' | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return 'hostile';
  }
  if (/[\0\\]/.test(decoded)) return 'hostile';
  const segments = decoded.split('/').slice(1);
  if (segments.some((s) => s === '.' || s === '..')) return 'hostile';
  const file = resolve(dir, `.${decoded}`);
  if (!within(dir, file)) return 'hostile';
  if (!realDir) return undefined;
  try {
    return within(realDir, await realpath(file)) ? file : 'hostile';
  } catch {
    return undefined; // no such file: the single-page fallback decides
  }
}

/**
 * Serves the built admin web client (`WEB_DIR`) at `/`, at the Express level ahead of the Nest
 * routes: GET and HEAD of any path outside /api, /mcp, /healthz, /readyz and /metrics. A file that
 * exists is served (`/assets/*` are content-hashed by Vite: cached for a year; the rest no-cache);
 * any other path without an extension gets index.html (the single-page fallback, so deep links such
 * as /runs/<id> reload); a missing file with an extension is a 404. Every answer carries the strict
 * CSP. Public by design: the client is static and holds no data; everything it shows comes from
 * /api, where the AuthGuard (deny by default) decides. With no index.html in WEB_DIR, 503 and a page
 * saying how to build it.
 */
export function webClient(dir: string): RequestHandler {
  const root = resolve(dir);
  const assets = join(root, 'assets');
  const files = serveStatic(root, {
    index: false,
    redirect: false,
    fallthrough: true,
    dotfiles: 'ignore',
    setHeaders: (res, path) => {
      res.setHeader('cache-control', within(assets, path) ? IMMUTABLE : NO_CACHE);
    },
  });
  let realRoot: Promise<string | undefined> | undefined;

  const answer = (res: Response, status: number, type: string, body: string, head: boolean) => {
    res.status(status).setHeader('content-type', type);
    res.setHeader('cache-control', NO_CACHE);
    if (head) res.setHeader('content-length', Buffer.byteLength(body)).end();
    else res.end(body);
  };

  return (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isReserved(req.path)) return next();
    res.setHeader('content-security-policy', WEB_CLIENT_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    const head = req.method === 'HEAD';
    void (async () => {
      // Looked up per request while missing, so a client built after the gateway started is found.
      realRoot ??= realpath(root).catch(() => undefined);
      const real = await realRoot;
      if (!real) realRoot = undefined;
      const file = await fileFor(root, real, req.path);
      if (file === 'hostile') return answer(res, 404, 'text/plain; charset=utf-8', 'not found\n', head);
      const fallback = async () => {
        if (extname(req.path) !== '')
          return answer(res, 404, 'text/plain; charset=utf-8', 'not found\n', head);
        const index = await readFile(join(root, 'index.html'), 'utf8').catch(() => undefined);
        if (index === undefined) return answer(res, 503, 'text/html; charset=utf-8', NOT_BUILT, head);
        answer(res, 200, 'text/html; charset=utf-8', index, head);
      };
      if (file === undefined) return fallback();
      files(req, res, () => void fallback().catch(next));
    })().catch(next);
  };
}
