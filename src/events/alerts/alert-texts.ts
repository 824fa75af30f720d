import { formatUsd } from '../../shared/money.js';
import type { AlertLanguage, FiredAlert } from './alerts.schemas.js';

/** One alert as it is sent: an e-mail's subject and text; the messenger gets the text alone. */
export interface AlertText {
  subject: string;
  text: string;
}

/**
 * An amount exactly as the ledger has it (never rounded: 0.0012345 stays), with at least cents:
 * `$12.50` in English, `12,50 $` in Russian.
 */
export function displayUsd(value: string, language: AlertLanguage): string {
  const plain = formatUsd(value);
  const negative = plain.startsWith('-');
  const [whole, fraction = ''] = (negative ? plain.slice(1) : plain).split('.');
  const digits = `${whole}${language === 'ru' ? ',' : '.'}${fraction.padEnd(2, '0')}`;
  return language === 'ru' ? `${negative ? '-' : ''}${digits}\u00a0$` : `${negative ? '-' : ''}$${digits}`;
}

const keyName = (alert: { keyLabel: string | null; keyId: string }) => (alert.keyLabel ? `«${alert.keyLabel}»` : alert.keyId);

/** Clear and short, in the account's language; the brand opens the subject as in every other message. */
export function alertText(alert: FiredAlert, language: AlertLanguage, brand: string): AlertText {
  const usd = (value: string) => displayUsd(value, language);
  const ru = language === 'ru';
  switch (alert.kind) {
    case 'balance_below':
      return ru
        ? { subject: `${brand}: баланс ниже ${usd(alert.thresholdUsd)}`, text: `Баланс аккаунта ${usd(alert.balanceUsd)} — ниже порога ${usd(alert.thresholdUsd)}. Пополните баланс, чтобы запросы не остановились.` }
        : { subject: `${brand}: balance below ${usd(alert.thresholdUsd)}`, text: `Your balance is ${usd(alert.balanceUsd)}, below your alert at ${usd(alert.thresholdUsd)}. Top up so requests keep working.` };
    case 'spend_today_above':
      return ru
        ? { subject: `${brand}: расход за сегодня выше ${usd(alert.thresholdUsd)}`, text: `Расход за ${alert.day} (UTC): ${usd(alert.spentUsd)} — выше порога ${usd(alert.thresholdUsd)}.` }
        : { subject: `${brand}: today's spend above ${usd(alert.thresholdUsd)}`, text: `Spend on ${alert.day} (UTC): ${usd(alert.spentUsd)}, above your alert at ${usd(alert.thresholdUsd)}.` };
    case 'key_cap_share':
      return ru
        ? { subject: `${brand}: ключ ${keyName(alert)} израсходовал ${alert.percent}% лимита`, text: `Ключ ${keyName(alert)} израсходовал ${usd(alert.spentUsd)} из месячного лимита ${usd(alert.capUsd)} (порог ${alert.percent}%).` }
        : { subject: `${brand}: key ${keyName(alert)} at ${alert.percent}% of its cap`, text: `Key ${keyName(alert)} has spent ${usd(alert.spentUsd)} of its ${usd(alert.capUsd)} monthly cap (alert at ${alert.percent}%).` };
    case 'invoice_paid':
      return ru
        ? { subject: `${brand}: счёт оплачен`, text: `Счёт ${alert.invoiceId} оплачен: на баланс зачислено ${usd(alert.usdCredit)}${alert.bonusUsd !== '0' ? ` и бонус ${usd(alert.bonusUsd)}` : ''}.` }
        : { subject: `${brand}: invoice paid`, text: `Invoice ${alert.invoiceId} is paid: ${usd(alert.usdCredit)} credited${alert.bonusUsd !== '0' ? ` plus a ${usd(alert.bonusUsd)} bonus` : ''}.` };
    case 'video_finished':
      if (alert.status === 'completed') {
        return ru
          ? { subject: `${brand}: видео готово`, text: `Видео ${alert.taskId} (${alert.model}) готово.` }
          : { subject: `${brand}: video ready`, text: `Video ${alert.taskId} (${alert.model}) is ready.` };
      }
      return ru
        ? { subject: `${brand}: видео не получилось`, text: `Видео ${alert.taskId} (${alert.model}) завершилось ошибкой; удержанная сумма возвращена.` }
        : { subject: `${brand}: video failed`, text: `Video ${alert.taskId} (${alert.model}) failed; the held amount was released.` };
  }
}
