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
