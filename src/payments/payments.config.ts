import { z } from 'zod';

/** A non-negative decimal in operator configuration, as a string (never a float). */
const decimalString = z
  .union([z.string(), z.number()])
  .transform((value) => (typeof value === 'number' ? String(value) : value.trim()))
  .pipe(z.string().regex(/^\d{1,12}(\.\d{1,10})?$/, 'must be a non-negative decimal string such as "95.50"'));

const agreementSection = z.object({ title: z.string().min(1), text: z.string().min(1) });
const agreementText = z.object({
  title: z.string().min(1),
  intro: z.string(),
  sections: z.array(agreementSection).default([]),
});

const methodSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a short lowercase id'),
    label: z.string().min(1),
    currency: z.enum(['USD', 'RUB']),
    minUsd: decimalString,
    maxUsd: decimalString,
    enabled: z.boolean().default(true),
    provider: z.enum(['manual', 'checkout']).default('manual'),
  })
  .refine((m) => Number(m.minUsd) > 0 && Number(m.minUsd) <= Number(m.maxUsd), 'minUsd must be positive and at most maxUsd');

const DEFAULT_AGREEMENT = {
  termsVersion: '2026-11-01',
  privacyVersion: '2026-11-01',
  ru: {
    title: 'Пользовательское соглашение и политика конфиденциальности',
    intro: 'Перед пополнением баланса примите условия.',
    sections: [
      { title: 'Оплата', text: 'Оплаченный баланс расходуется на запросы к моделям по ценам каталога.' },
      { title: 'Бонусы', text: 'Бонусный баланс расходуется первым и сгорает по истечении срока.' },
    ],
  },
  en: {
    title: 'Terms of service and privacy policy',
    intro: 'Accept the terms before topping up your balance.',
    sections: [
      { title: 'Payment', text: 'Paid balance is spent on model requests at catalog prices.' },
      { title: 'Bonus', text: 'Bonus balance is spent first and expires after its term.' },
    ],
  },
};

/** The `payments` section of the operator file (BAIKAL_CONFIG). Every field has a working default. */
export const paymentsSchema = z
  .object({
    enabled: z.boolean().default(true),
    rubPerUsd: decimalString.default('95'),
    methods: z
      .array(methodSchema)
      .default([
        { id: 'card_rub', label: 'Bank card (RUB)', currency: 'RUB', minUsd: '1', maxUsd: '5000', enabled: true, provider: 'manual' },
        { id: 'usd_transfer', label: 'Transfer (USD)', currency: 'USD', minUsd: '10', maxUsd: '10000', enabled: true, provider: 'manual' },
      ])
      .refine((methods) => new Set(methods.map((m) => m.id)).size === methods.length, 'method ids must be unique'),
    bonus: z
      .object({
        enabled: z.boolean().default(true),
        expiryDays: z.number().int().min(1).max(3650).default(30),
        tiers: z
          .array(z.object({ minUsd: decimalString, rate: decimalString.refine((r) => Number(r) <= 1 && !/\.\d{9,}$/.test(r), 'rate must be at most 1, with at most 8 decimal places') }))
          .default([
            { minUsd: '50', rate: '0.05' },
            { minUsd: '200', rate: '0.10' },
          ]),
      })
      .prefault({}),
    invoiceTtlMinutes: z.number().int().min(1).max(7 * 24 * 60).default(60),
    agreement: z
      .object({
        termsVersion: z.string().min(1).max(64).default(DEFAULT_AGREEMENT.termsVersion),
        privacyVersion: z.string().min(1).max(64).default(DEFAULT_AGREEMENT.privacyVersion),
        ru: agreementText.default(DEFAULT_AGREEMENT.ru),
        en: agreementText.default(DEFAULT_AGREEMENT.en),
      })
      .prefault({}),
    checkout: z
      .object({
        baseUrl: z.url().default('https://checkout.example.invalid/pay'),
        webhookSecretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/).default('BAIKAL_CHECKOUT_WEBHOOK_SECRET'),
        toleranceSeconds: z.number().int().min(1).max(86_400).default(300),
      })
      .prefault({}),
    trustedPartner: z.object({ enabled: z.boolean().default(true) }).prefault({}),
  })
  .prefault({});

export type PaymentsFile = z.output<typeof paymentsSchema>;
export type PaymentMethodConfig = PaymentsFile['methods'][number];

export interface PaymentsSettings extends PaymentsFile {
  /** The checkout provider's HMAC secret (from the environment variable `checkout.webhookSecretEnv`); null when no checkout method is configured. */
  checkoutSecret: string | null;
}

/**
 * Resolves secrets: when any method uses the hosted checkout, the variable named by
 * `checkout.webhookSecretEnv` must be set (a clear boot error names it otherwise).
 */
export function resolvePayments(file: PaymentsFile, env: NodeJS.ProcessEnv): PaymentsSettings {
  const usesCheckout = file.methods.some((m) => m.provider === 'checkout');
  let checkoutSecret: string | null = null;
  if (usesCheckout) {
    const name = file.checkout.webhookSecretEnv;
    const value = env[name]?.trim();
    if (!value) throw new Error(`payments.checkout: environment variable ${name} (the checkout webhook secret) is not set`);
    checkoutSecret = value;
  }
  return { ...file, checkoutSecret };
}
