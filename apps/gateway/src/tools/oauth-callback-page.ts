import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { MCP_OAUTH_MESSAGE, type McpOAuthPopupMessage } from '@switchyard/contracts';

/**
 * The page a browser gets back from `/api/mcp/oauth/callback` (it asked for text/html): it says how
 * Connect ended, tells the web client that opened the popup, and closes itself. Nothing a request
 * carries reaches it unescaped (the provider's `error` and `error_description` do end up in the
 * refusal's sentence), its one script and one style are fixed text allowed by their hashes, and it
 * holds no token, code or state.
 */

/** Same-origin only by construction; the web client listens on it too (a tab opened without an opener). */
export const OAUTH_BROADCAST_CHANNEL = MCP_OAUTH_MESSAGE;

// Fixed text: the outcome travels in the #outcome element's data-message attribute (JSON, HTML-escaped).
const SCRIPT = `(function () {
  var el = document.getElementById('outcome');
  var msg = JSON.parse(el.getAttribute('data-message'));
  try { history.replaceState(null, '', location.pathname); } catch (e) {}
  try { var ch = new BroadcastChannel(${JSON.stringify(OAUTH_BROADCAST_CHANNEL)}); ch.postMessage(msg); ch.close(); } catch (e) {}
  var opener = window.opener;
  var ours = false;
  try { ours = !!opener && opener.location.origin === location.origin; } catch (e) { ours = false; }
  if (!ours) return;
  opener.postMessage(msg, location.origin);
  document.getElementById('close').hidden = true;
  document.getElementById('closing').hidden = false;
  setTimeout(function () { window.close(); }, 150);
})();`;

const STYLE = `:root { color-scheme: light dark; --bg: #f6f7f9; --fg: #1b1f24; --muted: #5d6570; --ok: #1a7f4b; --bad: #c62828; --card: #fff; --border: #d5d9e0; }
@media (prefers-color-scheme: dark) { :root { --bg: #141414; --fg: #e8e8e8; --muted: #9a9a9a; --ok: #4cc38a; --bad: #ff6b6b; --card: #1e1e1e; --border: #333; } }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', sans-serif; padding: 16px; }
main { background: var(--card); border: 1px solid var(--border); border-radius: 10px; padding: 20px 24px; max-width: 520px; width: 100%; overflow-wrap: anywhere; }
h1 { font-size: 18px; margin: 0 0 8px; }
.ok h1 { color: var(--ok); }
.bad h1 { color: var(--bad); }
code { font: 12.5px ui-monospace, Menlo, Consolas, monospace; padding: 1px 6px; border: 1px solid var(--border); border-radius: 4px; }
p { margin: 8px 0 0; }
.muted { color: var(--muted); font-size: 13px; }`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** Nothing but the fixed script and style; no fetches, no forms, no frames, no base. */
export const OAUTH_CALLBACK_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TEXT = {
  en: {
    lang: 'en',
    okTitle: 'Connected',
    ok: (name: string) => `${name} is signed in. Switchyard can now test it and use its tools.`,
    badTitle: 'Connect did not finish',
    again: 'Press Connect again in Switchyard to try once more.',
    closing: 'This window closes by itself.',
    close: 'You can close this window and go back to Switchyard.',
  },
  zh: {
    lang: 'zh-CN',
    okTitle: '已连接',
    ok: (name: string) => `${name} 已完成登录。Switchyard 现在可以测试它并使用它的工具。`,
    badTitle: '连接未完成',
    again: '可在 Switchyard 中再次点击“连接”重试。',
    closing: '此窗口会自动关闭。',
    close: '你可以关闭此窗口，回到 Switchyard。',
  },
} as const;

/** Text as HTML text or a quoted attribute value: every character that could end either is escaped. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"'`]/g,
    (c) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' })[c] as string,
  );
}

/** Whether the caller prefers a page to JSON (a browser navigating; `*\/*` and no Accept mean JSON). */
export function wantsHtml(req: Request): boolean {
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}

export function pageLanguage(req: Request): keyof typeof TEXT {
  return req.acceptsLanguages('en', 'zh') === 'zh' ? 'zh' : 'en';
}

export function renderCallbackPage(message: McpOAuthPopupMessage, lang: keyof typeof TEXT): string {
  const t = TEXT[lang];
  const body = message.ok
    ? `<h1>${escapeHtml(t.okTitle)}</h1>
<p>${escapeHtml(t.ok(message.name))}</p>`
    : `<h1>${escapeHtml(t.badTitle)}</h1>
<p><code>${escapeHtml(message.code)}</code> ${escapeHtml(message.detail)}</p>
<p class="muted">${escapeHtml(t.again)}</p>`;
  return `<!doctype html>
<html lang="${t.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Switchyard · ${escapeHtml(message.ok ? t.okTitle : t.badTitle)}</title>
<style>${STYLE}</style>
</head>
<body>
<main class="${message.ok ? 'ok' : 'bad'}" id="outcome" role="status" data-message="${escapeHtml(JSON.stringify(message))}">
${body}
<p class="muted" id="close">${escapeHtml(t.close)}</p>
<p class="muted" id="closing" hidden>${escapeHtml(t.closing)}</p>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** The page's headers: strict CSP, never cached, no referrer, no sniffing. */
export function callbackPageHeaders(res: Response): Response {
  return res
    .setHeader('content-security-policy', OAUTH_CALLBACK_PAGE_CSP)
    .setHeader('cache-control', 'no-store')
    .setHeader('referrer-policy', 'no-referrer')
    .setHeader('x-content-type-options', 'nosniff')
    .setHeader('vary', 'Accept, Accept-Language')
    .type('text/html; charset=utf-8');
}
