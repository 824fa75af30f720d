export type Theme = 'light' | 'dark';
const STORAGE_KEY = 'baikal.theme';

/** The stored theme, else the system's preference. */
export function initialTheme(): Theme {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === 'light' || stored === 'dark') return stored;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme, remember = false): void {
  document.documentElement.dataset.theme = theme;
  if (remember) localStorage.setItem(STORAGE_KEY, theme);
}
