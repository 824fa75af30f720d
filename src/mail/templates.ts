export type MailLanguage = 'ru' | 'en';

export interface MailContent {
  subject: string;
  text: string;
}

/** Subject and plain text of every message the gateway sends, in ru and en. */
export const templates = {
  verifyEmail(language: MailLanguage, p: { brand: string; code: string; minutes: number }): MailContent {
    return language === 'ru'
      ? {
          subject: `${p.brand}: код подтверждения e-mail`,
          text: `Ваш код подтверждения: ${p.code}\n\nКод действует ${p.minutes} минут и подходит один раз.\nЕсли вы не регистрировались в ${p.brand}, просто проигнорируйте это письмо.\n`,
        }
      : {
          subject: `${p.brand}: your e-mail verification code`,
          text: `Your verification code: ${p.code}\n\nThe code is valid for ${p.minutes} minutes and works once.\nIf you did not sign up for ${p.brand}, ignore this message.\n`,
        };
  },
  linkEmail(language: MailLanguage, p: { brand: string; code: string; minutes: number }): MailContent {
    return language === 'ru'
      ? {
          subject: `${p.brand}: код для привязки e-mail`,
          text: `Код для привязки этого адреса к аккаунту ${p.brand}: ${p.code}\n\nКод действует ${p.minutes} минут и подходит один раз.\nЕсли вы этого не запрашивали, просто проигнорируйте это письмо.\n`,
        }
      : {
          subject: `${p.brand}: code to link your e-mail`,
          text: `Code to link this address to your ${p.brand} account: ${p.code}\n\nThe code is valid for ${p.minutes} minutes and works once.\nIf you did not ask for this, ignore this message.\n`,
        };
  },
  webhookDisabled(language: MailLanguage, p: { brand: string; url: string; days: number }): MailContent {
    const days = Number(p.days.toFixed(2));
    return language === 'ru'
      ? {
          subject: `${p.brand}: вебхук отключён`,
          text: `Доставки на адрес ${p.url} не удавались ${days} дн., и мы отключили этот вебхук.\n\nИсправьте приёмник и включите вебхук снова в кабинете (раздел «Вебхуки»); недоставленные события можно отправить повторно оттуда же.\n`,
        }
      : {
          subject: `${p.brand}: webhook endpoint disabled`,
          text: `Deliveries to ${p.url} have failed for ${days} days, so we disabled this webhook endpoint.\n\nFix the receiver and enable the endpoint again in the cabinet (Webhooks); you can replay the undelivered events from there.\n`,
        };
  },
  organizationInvitation(language: MailLanguage, p: { brand: string; organization: string; inviter: string; role: string; link: string; days: number }): MailContent {
    return language === 'ru'
      ? {
          subject: `${p.brand}: приглашение в организацию «${p.organization}»`,
          text: `${p.inviter} приглашает вас в организацию «${p.organization}» в ${p.brand} (роль: ${p.role}).\n\nЧтобы присоединиться, откройте ссылку, войдите или зарегистрируйтесь:\n${p.link}\n\nСсылка действует ${p.days} дн. и подходит один раз. Если вы не ждали приглашения, просто проигнорируйте это письмо.\n`,
        }
      : {
          subject: `${p.brand}: invitation to join ${p.organization}`,
          text: `${p.inviter} invites you to join the organization ${p.organization} on ${p.brand} (role: ${p.role}).\n\nTo join, open this link and sign in or sign up:\n${p.link}\n\nThe link is valid for ${p.days} days and works once. If you did not expect this invitation, ignore this message.\n`,
        };
  },
};
