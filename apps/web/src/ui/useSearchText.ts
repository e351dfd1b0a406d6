import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';

/** How long typing rests before the URL (and the query reading it) follows. */
const DEBOUNCE_MS = 300;

/**
 * A search box kept in the URL's `?q=` (so a search can be shared and reloaded): `q` is what the
 * URL says, `text` what the box shows; the URL follows the box once typing rests, replacing the
 * history entry rather than adding one per keystroke.
 */
export function useSearchText(): { q: string; text: string; setText: (text: string) => void } {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const [text, setText] = useState(q);
  useEffect(() => {
    const id = setTimeout(() => {
      if (text === q) return;
      const next = new URLSearchParams(params);
      if (text) next.set('q', text);
      else next.delete('q');
      setParams(next, { replace: true });
    }, DEBOUNCE_MS);
    return () => clearTimeout(id);
  }, [text, q, params, setParams]);
  return { q, text, setText };
}
