import { z } from 'zod';

/** Where an alert goes: the account's verified e-mail, its linked messenger chat. */
export const ALERT_CHANNELS = ['email', 'messenger'] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];
export type AlertLanguage = 'ru' | 'en';

export const THRESHOLD_KINDS = ['balance_below', 'spend_today_above', 'key_cap_share'] as const;
export const EVENT_KINDS = ['invoice_paid', 'video_finished'] as const;
export type AlertKind = (typeof THRESHOLD_KINDS)[number] | (typeof EVENT_KINDS)[number];

const channels = z
  .array(z.enum(ALERT_CHANNELS))
  .min(1, 'Choose at least one channel')
  .max(2)
  .transform((list) => [...new Set(list)]);

/** USD, exact decimal text (never a float), not negative, at most 10 decimal places as the ledger keeps. */
const amountUsd = z
  .string()
  .trim()
  .regex(/^\d{1,18}(\.\d{1,10})?$/, 'Must be a non-negative USD amount such as "5" or "12.50"');

const thresholdRule = z.strictObject({ amountUsd, channels });
const keyShareRule = z.strictObject({
  /** Null or absent: every key of the account that has a monthly spend cap. */
  keyId: z.uuid('Must be a key id').nullish(),
  percent: z.number().int('Must be a whole percent').min(1, 'Must be between 1 and 100').max(100, 'Must be between 1 and 100'),
  channels,
});
const eventRule = z.strictObject({ channels });

/** The whole of an account's alert settings, replaced at once (the cabinet saves its form). */
export const alertSettingsInput = z.strictObject({
  language: z.enum(['ru', 'en']).optional(),
  balanceBelow: thresholdRule.nullish(),
  spendTodayAbove: thresholdRule.nullish(),
  keyCapShares: z.array(keyShareRule).max(100).default([]),
  invoicePaid: eventRule.nullish(),
  videoFinished: eventRule.nullish(),
});
export type AlertSettingsInput = z.input<typeof alertSettingsInput>;
export type AlertSettingsData = z.output<typeof alertSettingsInput>;

/** One stored rule (alert_rules). */
export interface AlertRule {
  kind: AlertKind;
  keyId: string | null;
  /** USD for balance and spend, percent for key shares, null for event alerts. */
  threshold: string | null;
  channels: AlertChannel[];
}

/** What the account's alert settings page shows. */
export interface AlertSettingsView {
  language: AlertLanguage;
  email: string | null;
  emailVerified: boolean;
  messengerLinked: boolean;
  /** Whether the operator configured a bot that can send messages. */
  messengerAvailable: boolean;
  balanceBelow: { amountUsd: string; channels: AlertChannel[] } | null;
  spendTodayAbove: { amountUsd: string; channels: AlertChannel[] } | null;
  keyCapShares: { keyId: string | null; percent: number; channels: AlertChannel[] }[];
  invoicePaid: { channels: AlertChannel[] } | null;
  videoFinished: { channels: AlertChannel[] } | null;
}

/** An alert that fired: what the texts and the `onFired` hook (webhooks) are given. */
export type FiredAlert =
  | { kind: 'balance_below'; thresholdUsd: string; balanceUsd: string }
  | { kind: 'spend_today_above'; thresholdUsd: string; spentUsd: string; day: string }
  | { kind: 'key_cap_share'; keyId: string; keyLabel: string | null; percent: number; spentUsd: string; capUsd: string }
  | { kind: 'invoice_paid'; invoiceId: string; usdCredit: string; bonusUsd: string }
  | { kind: 'video_finished'; taskId: string; model: string; status: 'completed' | 'failed' };

/** An invoice paid or a video task finished, as its service published it (alerted once per id). */
export type AlertEvent = Extract<FiredAlert, { kind: 'invoice_paid' | 'video_finished' }>;
