import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { pluralsEn, pluralsRu, type Noun } from './strings-plurals.js';
import { en, ru, type StringKey } from './strings.js';

export type Language = 'en' | 'ru';
const dictionaries: Record<Language, Record<StringKey, string>> = { en, ru };
const plurals: Record<Language, Record<Noun, Partial<Record<Intl.LDMLPluralRule, string>> & { other: string }>> = { en: pluralsEn, ru: pluralsRu };
const STORAGE_KEY = 'baikal.language';

/** The stored choice, else the browser's first language we speak, else English. */
function initialLanguage(): Language {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === 'en' || stored === 'ru') return stored;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split('-')[0];
    if (base === 'ru' || base === 'en') return base;
  }
  return 'en';
}

export type Translate = (key: StringKey, values?: Record<string, string | number>) => string;

interface I18n {
  language: Language;
  setLanguage(language: Language): void;
  t: Translate;
  /** Dates and times in the reader's language and time zone. */
  formatDate(iso: string | null | undefined, withTime?: boolean): string;
  formatNumber(value: number): string;
  /** A number with its noun in the language's plural form: `count('request', 2)` is "2 requests" or "2 запроса". */
  count(noun: Noun, value: number): string;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<Language>(initialLanguage);
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);
  const setLanguage = useCallback((next: Language) => {
    localStorage.setItem(STORAGE_KEY, next);
    setLanguageState(next);
  }, []);
  const value = useMemo<I18n>(() => {
    const dictionary = dictionaries[language];
    const locale = language === 'ru' ? 'ru-RU' : 'en-US';
    const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
    const dateOnly = new Intl.DateTimeFormat(locale, { dateStyle: 'medium' });
    const numbers = new Intl.NumberFormat(locale);
    const pluralRules = new Intl.PluralRules(locale);
    const nouns = plurals[language];
    return {
      language,
      setLanguage,
      t: (key, values) => dictionary[key].replace(/\{(\w+)\}/g, (_, name: string) => String(values?.[name] ?? `{${name}}`)),
      formatDate: (iso, withTime = true) => (iso ? (withTime ? dateTime : dateOnly).format(new Date(iso)) : '—'),
      formatNumber: (value) => numbers.format(value),
      count: (noun, value) => {
        const forms = nouns[noun];
        return (forms[pluralRules.select(value)] ?? forms.other).replace('{count}', numbers.format(value));
      },
    };
  }, [language, setLanguage]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useI18n outside I18nProvider');
  return value;
}
