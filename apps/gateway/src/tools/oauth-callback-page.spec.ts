import { createHash } from 'node:crypto';
import { MCP_OAUTH_MESSAGE, McpOAuthPopupMessage } from '@switchyard/contracts';
import { escapeHtml, OAUTH_CALLBACK_PAGE_CSP, renderCallbackPage } from './oauth-callback-page';

/** What attackers put where the page shows text: the provider's error, its description, a record name. */
const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  '</main><script src="https://evil.example/x.js"></script>',
  '`${alert(1)}`',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '<!--',
  ']]></style><script>alert(1)</script>',
  'javascript:alert(1)',
  '\u2028\u2029</script>',
];

const sha = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' };

/**
 * The page read the way a browser would where it matters (no DOM here: the gateway's types have
 * none): the fixed script and style taken out, every tag and attribute name that is left, the text
 * of the main element and the message attribute decoded.
 */
function parse(html: string) {
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
  const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
  const rest = html.replace(script, '').replace(style, '');
  const tags = [...rest.matchAll(/<([a-zA-Z][\w-]*)([^>]*)>/g)].map((m) => ({
    name: (m[1] as string).toLowerCase(),
    attributes: [...(m[2] as string).matchAll(/([^\s="'>/]+)(?:=("[^"]*"|'[^']*'|[^\s>]*))?/g)].map((a) =>
      (a[1] as string).toLowerCase(),
    ),
  }));
  const decode = (text: string) =>
    text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, e: string) => ENTITIES[e] ?? '');
  const message = /data-message="([^"]*)"/.exec(rest)?.[1];
  const paragraph = /<main[^>]*>[\s\S]*?<p>([\s\S]*?)<\/p>/.exec(rest)?.[1] ?? '';
  return {
    script,
    style,
    tags,
    lang: /<html lang="([^"]*)">/.exec(rest)?.[1],
    h1: decode(/<h1>([^<]*)<\/h1>/.exec(rest)?.[1] ?? ''),
    text: decode(paragraph.replace(/<[^>]*>/g, '')),
    message: message === undefined ? undefined : (JSON.parse(decode(message)) as unknown),
  };
}

const PAGE_TAGS = ['html', 'head', 'meta', 'meta', 'meta', 'title', 'style', 'body', 'main', 'h1', 'p'];

describe('the OAuth callback page', () => {
  it('escapes every character that could end text or an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&\`</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;',
    );
  });

  it.each(HOSTILE)('shows hostile text as text and hands it over unchanged: %s', (evil) => {
    for (const lang of ['en', 'zh'] as const) {
      const message = {
        type: MCP_OAUTH_MESSAGE,
        ok: false,
        code: 'forbidden',
        detail: `the provider did not grant access to ${evil}: ${evil} (${evil})`,
      } as const;
      const html = renderCallbackPage(message, lang);
      const page = parse(html);
      // The fixed elements only: one script, one style, nothing an attacker added.
      expect(html.match(/<script/gi)).toHaveLength(1);
      expect(html.match(/<style/gi)).toHaveLength(1);
      expect(page.tags.map((t) => t.name)).toEqual([...PAGE_TAGS, 'code', 'p', 'p', 'p', 'script']);
      expect(page.tags.flatMap((t) => t.attributes)).not.toContainEqual(
        expect.stringMatching(/^on|^src$|^href$/),
      );
      expect(page.text).toBe(`forbidden ${message.detail}`);
      // The message the script posts is exactly what was rendered.
      expect(McpOAuthPopupMessage.parse(page.message)).toEqual(message);
    }
  });

  it('escapes a hostile record name on success', () => {
    const evil = HOSTILE[1] as string;
    const page = parse(renderCallbackPage({ type: MCP_OAUTH_MESSAGE, ok: true, id: 3, name: evil }, 'en'));
    expect(page.tags.map((t) => t.name)).toEqual([...PAGE_TAGS, 'p', 'p', 'script']);
    expect(page.h1).toBe('Connected');
    expect(page.text).toBe(`${evil} is signed in. Switchyard can now test it and use its tools.`);
    expect(page.message).toEqual({ type: MCP_OAUTH_MESSAGE, ok: true, id: 3, name: evil });
  });

  it('allows only its own script and style by hash: no inline handlers, no other source', () => {
    const html = renderCallbackPage({ type: MCP_OAUTH_MESSAGE, ok: true, id: 1, name: 'github' }, 'zh');
    const { script, style, lang, h1 } = parse(html);
    const policy = Object.fromEntries(
      OAUTH_CALLBACK_PAGE_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]),
    );
    expect(policy).toEqual({
      'default-src': "'none'",
      'script-src': sha(script),
      'style-src': sha(style),
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
    // It posts only to its own origin and names no token.
    expect(script).toContain('opener.postMessage(msg, location.origin)');
    expect(script).not.toMatch(/postMessage\([^)]*'\*'/);
    expect(html).not.toMatch(/token|code=|state=/i);
    expect(lang).toBe('zh-CN');
    expect(h1).toBe('已连接');
  });
});
