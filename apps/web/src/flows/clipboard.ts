import type { Clip } from './doc';

/**
 * The builder's clipboard: the browser's local storage, so a copy reaches other flows and other
 * tabs. It is tagged with the owner who copied it and read back only by that owner, and signing out
 * forgets it: on a shared browser, the next person to sign in never pastes the last one's nodes.
 */
const FLOW_CLIPBOARD_KEY = 'switchyard.flow-clipboard';

interface Stored extends Clip {
  readonly owner: string;
}

export function writeClip(owner: string, clip: Clip): void {
  const stored: Stored = { owner, nodes: clip.nodes, edges: clip.edges };
  localStorage.setItem(FLOW_CLIPBOARD_KEY, JSON.stringify(stored));
}

/** The clip `owner` copied, or undefined (nothing copied, another owner's, or unreadable). */
export function readClip(owner: string): Clip | undefined {
  try {
    const stored = JSON.parse(localStorage.getItem(FLOW_CLIPBOARD_KEY) ?? 'null') as Partial<Stored> | null;
    if (!stored || stored.owner !== owner || !Array.isArray(stored.nodes) || !stored.nodes.length)
      return undefined;
    return { nodes: stored.nodes, edges: Array.isArray(stored.edges) ? stored.edges : [] };
  } catch {
    return undefined;
  }
}

export function forgetClip(): void {
  localStorage.removeItem(FLOW_CLIPBOARD_KEY);
}
