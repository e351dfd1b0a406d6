import type { ReactNode } from 'react';
import type { NodeKind } from './tokens';

/**
 * The builder's icons as inline SVG (the CSP allows only our own files, and emoji fonts are not a
 * given on every machine). Drawn on a 16×16 grid with strokes in `currentColor`.
 */
const PATHS: Record<NodeKind | 'copy' | 'paste' | 'trash' | 'pin' | 'gate', ReactNode> = {
  start: <path d="M5 3 L13 8 L5 13 Z" fill="currentColor" stroke="none" />,
  note: <path d="M3 2 H13 V10 L9 14 H3 Z M9 14 V10 H13 M5 5 H11 M5 8 H9" />,
  files: <path d="M2 4 H6 L7.5 5.5 H14 V13 H2 Z" />,
  command: <path d="M2 3 H14 V13 H2 Z M4.5 6 L7 8 L4.5 10 M8 10.5 H11.5" />,
  web: <path d="M8 2 A6 6 0 1 0 8 14 A6 6 0 1 0 8 2 M2 8 H14 M8 2 C5 5 5 11 8 14 M8 2 C11 5 11 11 8 14" />,
  sql: <path d="M3 4 C3 2 13 2 13 4 C13 6 3 6 3 4 V12 C3 14 13 14 13 12 V4 M3 8 C3 10 13 10 13 8" />,
  tasks: <path d="M5 4 H14 M5 8 H14 M5 12 H14 M2 4 H3 M2 8 H3 M2 12 H3" />,
  flow: <path d="M8 2 A6 6 0 1 0 8 14 A6 6 0 1 0 8 2 M8 5 V8 L10.5 9.5" />,
  mcp: <path d="M6 2 V5 M10 2 V5 M4 5 H12 V8 A4 4 0 0 1 4 8 Z M8 12 V14" />,
  workflow: <path d="M3 3 H7 V6 H3 Z M9 10 H13 V13 H9 Z M5 6 V11.5 H9 M7 4.5 H11 V10" />,
  tool: <path d="M10 2 A3.5 3.5 0 0 0 7 7 L2.5 11.5 L4.5 13.5 L9 9 A3.5 3.5 0 0 0 14 6 L11.5 8 L8 4.5 Z" />,
  copy: <path d="M5 5 H13 V13 H5 Z M3 11 V3 H11" />,
  paste: <path d="M4 3 H12 V14 H4 Z M6 2 H10 V4 H6 Z M6 7 H10 M6 10 H10" />,
  trash: <path d="M3 4 H13 M6 4 V2.5 H10 V4 M4.5 4 L5.5 14 H10.5 L11.5 4 M7 7 V11 M9 7 V11" />,
  pin: <path d="M6 2 H10 L9.5 6 L12 9 H4 L6.5 6 Z M8 9 V14" />,
  gate: <path d="M4 7 V5 A4 4 0 0 1 12 5 V7 M3 7 H13 V14 H3 Z M8 10 V11.5" />,
};

export function Icon({ name, size = 16 }: { name: keyof typeof PATHS; size?: number }) {
  return (
    <svg
      className="icon"
      viewBox="0 0 16 16"
      width={size}
      height={size}
      fill="none"
      stroke="currentColor"
      strokeWidth="1.5"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {PATHS[name]}
    </svg>
  );
}
