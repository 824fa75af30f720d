import { z } from 'zod';

export const ANNOUNCEMENT_LANGUAGES = ['ru', 'en'] as const;
export type AnnouncementLanguage = (typeof ANNOUNCEMENT_LANGUAGES)[number];

/** Longest title and body, in characters, after trimming. */
export const MAX_TITLE_LENGTH = 200;
export const MAX_BODY_LENGTH = 10_000;

/** Control characters other than tab, line feed and carriage return (NUL cannot even be stored). */
// eslint-disable-next-line no-control-regex
const BODY_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const TITLE_CONTROL = /[\u0000-\u001f\u007f]/;

/** A one-line plain-text title. */
const title = z
  .string()
  .trim()
  .min(1, 'Title must not be empty')
  .max(MAX_TITLE_LENGTH, `Title must be at most ${MAX_TITLE_LENGTH} characters`)
  .refine((v) => !TITLE_CONTROL.test(v), { message: 'Title must be one line of plain text without control characters', params: { type: 'value_error' } });

/** A plain-text body; line breaks are kept, markup is not interpreted. */
const body = z
  .string()
  .trim()
  .min(1, 'Body must not be empty')
  .max(MAX_BODY_LENGTH, `Body must be at most ${MAX_BODY_LENGTH} characters`)
  .refine((v) => !BODY_CONTROL.test(v), { message: 'Body must be plain text without control characters', params: { type: 'value_error' } });

export const languageInput = z.enum(ANNOUNCEMENT_LANGUAGES, "Input should be 'ru' or 'en'");

/** GET /announcements query; other query parameters are ignored, as everywhere in the shim. */
export const listAnnouncementsInput = z.object({ language: languageInput.optional().transform((v) => v ?? 'ru') });
export type ListAnnouncementsInput = z.input<typeof listAnnouncementsInput>;

export const announcementIdInput = z.strictObject({ announcementId: z.uuid('Input should be a valid UUID') });

/** Admin: a new announcement; both languages are required. `publish` publishes it at once. */
export const createAnnouncementInput = z.strictObject({
  titleRu: title,
  titleEn: title,
  bodyRu: body,
  bodyEn: body,
  publish: z.boolean().optional(),
});
export type CreateAnnouncementInput = z.input<typeof createAnnouncementInput>;

/** Admin: edits; absent fields keep their text, and no text may be cleared. */
export const updateAnnouncementInput = z.strictObject({
  titleRu: title.optional(),
  titleEn: title.optional(),
  bodyRu: body.optional(),
  bodyEn: body.optional(),
});
export type UpdateAnnouncementInput = z.input<typeof updateAnnouncementInput>;
