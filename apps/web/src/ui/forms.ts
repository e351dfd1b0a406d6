import { useEffect, useState } from 'react';
import { ApiError } from '../api/client';

/** Parses a JSON object typed into a text area: the value, or the reason it is not one. */
export function parseJsonObject(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  if (!text.trim()) return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return { ok: false, message: 'not a JSON object' };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

/** Whether the server's refusal names this field (for aria-invalid). */
export function invalidAt(error: unknown, path: string): boolean {
  return error instanceof ApiError && error.at(path).length > 0;
}

/** The value once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const id = setTimeout(() => setV(value), ms);
    return () => clearTimeout(id);
  }, [value, ms]);
  return v;
}
