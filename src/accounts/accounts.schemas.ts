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
