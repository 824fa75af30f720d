/**
 * The settings the accounts module reads (src/config.ts builds them from the environment and the operator
 * file; the composition root hands each service its own), so nothing here needs the whole application Config.
 */

/** SESSION_IDLE_HOURS and SESSION_MAX_DAYS: a cabinet session ends when idle this long, or this long after sign-in. */
export interface SessionSettings {
  idleMs: number;
  absoluteMs: number;
}

/** LOGIN_*: sign-in attempts counted per account (until a success) and per client address, in one window. */
export interface LoginThrottleSettings {
  maxFailuresPerAccount: number;
  maxAttemptsPerAddress: number;
  windowMs: number;
}

/** REGISTER_*: registrations counted per client address. */
export interface RegisterThrottleSettings {
  maxPerAddress: number;
  windowMs: number;
}

/** The operator file's messenger section with its webhook secret resolved from the environment. Never shown. */
export interface MessengerSettings {
  label: string;
  botUrl: string;
  webhookSecret: string;
  tokenTtlMs: number;
  /** Where the bot takes messages for linked users (alerts); null: none are sent. */
  sendUrl: string | null;
}
