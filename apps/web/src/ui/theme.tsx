import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';

export type Theme = 'dark' | 'light';
const THEME_KEY = 'switchyard.theme';

export function initialTheme(): Theme {
  const saved = localStorage.getItem(THEME_KEY);
  return saved === 'light' || saved === 'dark' ? saved : 'dark';
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset['theme'] = theme;
  localStorage.setItem(THEME_KEY, theme);
}

const Ctx = createContext<{ theme: Theme; toggle(): void }>({ theme: 'dark', toggle: () => undefined });

/** Dark first (the seed's canvas is dark); the choice is kept in local storage. */
export function ThemeProvider({ children }: { children: ReactNode }) {
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const toggle = useCallback(() => {
    setTheme((old) => {
      const next = old === 'dark' ? 'light' : 'dark';
      applyTheme(next);
      return next;
    });
  }, []);
  const value = useMemo(() => ({ theme, toggle }), [theme, toggle]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useTheme() {
  return useContext(Ctx);
}
