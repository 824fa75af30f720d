/**
 * Counted nouns, one template per plural category of each language (Intl.PluralRules: English one/other,
 * Russian one/few/many/other), `{count}` being the formatted number. i18n.tsx `count` picks the form; a count
 * shown with a noun anywhere in the cabinet goes through it, never through a fixed "{count} requests".
 */
type EnForms = { one: string; other: string };
type RuForms = { one: string; few: string; many: string; other: string };

export const pluralsEn = {
  request: { one: '{count} request', other: '{count} requests' },
  token: { one: '{count} token', other: '{count} tokens' },
  inputToken: { one: '{count} input token', other: '{count} input tokens' },
  outputToken: { one: '{count} output token', other: '{count} output tokens' },
  day: { one: '{count} day', other: '{count} days' },
  row: { one: '{count} row', other: '{count} rows' },
  session: { one: '{count} session', other: '{count} sessions' },
  member: { one: '{count} member', other: '{count} members' },
  openInvitation: { one: '{count} open invitation', other: '{count} open invitations' },
  // "from 5 to 10 seconds": Russian puts the noun after "до" in the genitive.
  toSeconds: { one: 'to {count} second', other: 'to {count} seconds' },
} satisfies Record<string, EnForms>;

export type Noun = keyof typeof pluralsEn;

export const pluralsRu: Record<Noun, RuForms> = {
  request: { one: '{count} запрос', few: '{count} запроса', many: '{count} запросов', other: '{count} запроса' },
  token: { one: '{count} токен', few: '{count} токена', many: '{count} токенов', other: '{count} токена' },
  inputToken: { one: '{count} входной токен', few: '{count} входных токена', many: '{count} входных токенов', other: '{count} входного токена' },
  outputToken: { one: '{count} выходной токен', few: '{count} выходных токена', many: '{count} выходных токенов', other: '{count} выходного токена' },
  day: { one: '{count} день', few: '{count} дня', many: '{count} дней', other: '{count} дня' },
  row: { one: '{count} строка', few: '{count} строки', many: '{count} строк', other: '{count} строки' },
  session: { one: '{count} сеанс', few: '{count} сеанса', many: '{count} сеансов', other: '{count} сеанса' },
  member: { one: '{count} участник', few: '{count} участника', many: '{count} участников', other: '{count} участника' },
  openInvitation: { one: '{count} ожидающее приглашение', few: '{count} ожидающих приглашения', many: '{count} ожидающих приглашений', other: '{count} ожидающего приглашения' },
  toSeconds: { one: 'до {count} секунды', few: 'до {count} секунд', many: 'до {count} секунд', other: 'до {count} секунды' },
};
