import { z } from 'zod';
import { intParam } from '../shared/validation.js';

export const usernameSchema = z
  .string()
  .trim()
  .min(3, 'Username must be at least 3 characters')
  .max(32, 'Username must be at most 32 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'Username may contain letters, digits, "_", "." and "-", and must start with a letter or digit');

export const emailSchema = z
  .string()
  .trim()
  .max(254, 'E-mail must be at most 254 characters')
  .pipe(z.email('Not a valid e-mail address'))
  .transform((value) => value.toLowerCase());

export const passwordSchema = z
  .string()
  .min(8, 'Password must be at least 8 characters')
  .max(128, 'Password must be at most 128 characters');

export const registerInput = z.strictObject({
  username: usernameSchema,
  email: emailSchema,
  password: passwordSchema,
});
export type RegisterInput = z.input<typeof registerInput>;

export const loginInput = z.strictObject({
  login: z.string().trim().min(1, 'Login must not be empty').max(254),
  // Never tell a caller more than "wrong credentials" about a password, but refuse absurd sizes early.
  password: z.string().min(1, 'Password must not be empty').max(1024),
});
export type LoginInput = z.input<typeof loginInput>;

export const transactionsQuery = z.object({ limit: intParam(1, 100, 25) });
export type TransactionsQuery = z.input<typeof transactionsQuery>;

/** E-mail codes: exactly 6 digits (DESIGN.md: E-mail). */
export const emailCodeSchema = z.string().trim().regex(/^\d{6}$/, 'Code must be 6 digits');
export const mailLanguageSchema = z.enum(['ru', 'en']);

export const verifyEmailInput = z.strictObject({
  code: emailCodeSchema,
  /** Optional (SPEC.md sends it); when present it must be the account's e-mail. */
  email: emailSchema.optional(),
});
export type VerifyEmailInput = z.input<typeof verifyEmailInput>;

export const resendVerificationInput = z.strictObject({
  email: emailSchema.optional(),
  language: mailLanguageSchema.optional(),
});
export type ResendVerificationInput = z.input<typeof resendVerificationInput>;

export const emailLinkStartInput = z.strictObject({
  email: emailSchema,
  language: mailLanguageSchema.optional(),
});
export type EmailLinkStartInput = z.input<typeof emailLinkStartInput>;

export const emailLinkConfirmInput = z.strictObject({
  email: emailSchema,
  code: emailCodeSchema,
  password: passwordSchema,
});
export type EmailLinkConfirmInput = z.input<typeof emailLinkConfirmInput>;

export const linkTokenSchema = z
  .string()
  .min(32, 'Token must be at least 32 characters')
  .max(256, 'Token must be at most 256 characters');
export const messengerTokenInput = z.strictObject({ token: linkTokenSchema });
export type MessengerTokenInput = z.input<typeof messengerTokenInput>;
export const messengerStatusQuery = z.object({ token: linkTokenSchema });
export type MessengerStatusQuery = z.input<typeof messengerStatusQuery>;

/** The bot's webhook report (see docs/cabinet.md "Messenger bot webhook"). */
export const messengerWebhookEvent = z.object({
  event_id: z.string().min(1).max(128).optional(),
  user: z.object({ id: z.union([z.string().min(1).max(64), z.number().int()]).transform(String), name: z.string().max(128).nullish() }),
  text: z.string().max(4096),
});
