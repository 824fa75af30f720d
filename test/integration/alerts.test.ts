import { randomUUID } from 'node:crypto';
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startGateway } from '../../src/server.js';
import { createLogger } from '../../src/shared/logging.js';
import type { UsageRecord } from '../../src/usage/usage-recorder.js';
import { AlertsService } from '../../src/events/alerts/alerts.service.js';
import { useAlertsGateway } from '../helpers/alerts.js';
import { newAdmin } from '../helpers/accounts.js';
import { http, trpcClient } from '../helpers/clients.js';
import { sleep } from '../helpers/identity.js';
import { createEndpoint, startReceiver } from '../helpers/webhooks.js';
import { waitFor } from '../helpers/reliability.js';

const { gw, env, gql, alertAccount, received } = useAlertsGateway();

const SETTINGS_FIELDS = 'language email emailVerified messengerLinked messengerAvailable balanceBelow { amountUsd channels } spendTodayAbove { amountUsd channels } keyCapShares { keyId percent channels } invoicePaid { channels } videoFinished { channels }';
const UPDATE = `mutation($input: AlertSettingsInput!) { updateAlertSettings(input: $input) { ${SETTINGS_FIELDS} } }`;
const BOTH = ['email', 'messenger'];

type Account = Awaited<ReturnType<typeof alertAccount>>;

async function setAlerts(account: Account, input: Record<string, unknown>) {
  const result = await gql(account.token, UPDATE, { input });
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data.updateAlertSettings;
}

/** Lets the committed change reach the hub, then waits for every scheduled evaluation (and its sends) to finish. */
async function settle() {
  await sleep(100);
  await gw.services.alerts.evaluator.idle();
}

/** A billed request through the usage recorder's write path (event, ledger debit, rollup; then the hub), optionally of a key. */
async function spend(account: Account, usd: string, apiKeyId: string | null = null) {
  gw.services.usage.record(usageRecord(account.userId, usd, apiKeyId));
  await gw.services.usage.flush();
  await settle();
}

function usageRecord(userId: string, amountUsd: string, apiKeyId: string | null): UsageRecord {
  const now = new Date();
  return {
    id: randomUUID(), userId, apiKeyId, requestId: `req-${randomUUID()}`, clientSurface: 'api', createdAt: now, completedAt: now,
    providerFamily: 'family_a', routeGroup: 'cheap', routeGroupLabel: 'Cheap', endpoint: '/v1/chat/completions', model: 'gen-5.6-luna',
    status: 'success', errorCode: null, latencyMs: 12, promptTokens: 10, completionTokens: 5, cacheReadTokens: null,
    cacheWriteTokens: null, totalTokens: 15, cacheHitRatio: null, publicInputUsdPer1m: '0.016', publicOutputUsdPer1m: '0.04',
    publicCacheReadUsdPer1m: null, publicCacheWriteUsdPer1m: null, publicRequestUsdPerGeneration: null, amountUsd,
    officialCostUsd: null, savedUsd: null, upstreamId: null,
  };
}

async function topUp(account: Account, usd: string) {
  await gw.services.billing.post({ userId: account.userId, amountUsd: usd, kind: 'topup', bucket: 'paid', idempotencyKey: `test-topup:${randomUUID()}` });
  await settle();
}

/** The same alert reached the account by e-mail and by messenger `count` times; answers the last one. */
function expectAlerts(account: Account, count: number) {
  const { mails, bot } = received(account);
  expect(mails.length, JSON.stringify(mails)).toBe(count);
  expect(bot.length, JSON.stringify(bot)).toBe(count);
  expect(bot.every((m) => m.signed)).toBe(true);
  const mail = mails[count - 1];
  if (mail) expect(bot[count - 1]!.text).toBe(`${mail.subject}\n\n${mail.text}`);
  return mail;
}

async function waitForAlerts(account: Account, count: number) {
  for (let i = 0; i < 200 && received(account).bot.length < count; i++) await sleep(50);
  await settle();
  return expectAlerts(account, count);
}

describe('alert settings', () => {
  it('are saved, read back, and refuse bad input with clear issues', async () => {
    const account = await alertAccount();
    const key = await gw.services.keys.create(account.actor, { monthlySpendCap: '10' });
    const saved = await setAlerts(account, { language: 'ru', balanceBelow: { amountUsd: '5.5', channels: ['email'] }, keyCapShares: [{ keyId: key.id, percent: 80, channels: BOTH }], invoicePaid: { channels: ['messenger'] } });
    expect(saved).toMatchObject({ language: 'ru', emailVerified: true, messengerLinked: true, messengerAvailable: true, balanceBelow: { amountUsd: '5.5', channels: ['email'] }, spendTodayAbove: null, keyCapShares: [{ keyId: key.id, percent: 80, channels: BOTH }], invoicePaid: { channels: ['messenger'] } });
    expect((await gql(account.token, `{ alertSettings { ${SETTINGS_FIELDS} } }`)).data.alertSettings).toEqual(saved);

    const refused = async (input: Record<string, unknown>) => {
      const result = await gql(account.token, UPDATE, { input });
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      return result.errors![0]!.extensions!.issues as { loc: (string | number)[]; type: string }[];
    };
    expect((await refused({ balanceBelow: { amountUsd: '-1', channels: ['email'] } }))[0]).toMatchObject({ loc: ['balanceBelow', 'amountUsd'] });
    expect((await refused({ keyCapShares: [{ percent: 0, channels: ['email'] }] }))[0]).toMatchObject({ loc: ['keyCapShares', 0, 'percent'] });
    expect((await refused({ keyCapShares: [{ percent: 101, channels: ['email'] }] }))[0]).toMatchObject({ loc: ['keyCapShares', 0, 'percent'] });
    expect(await refused({ keyCapShares: [{ keyId: randomUUID(), percent: 50, channels: ['email'] }] })).toEqual([expect.objectContaining({ loc: ['keyCapShares', 0, 'keyId'], type: 'unknown_key' })]);
    expect((await refused({ invoicePaid: { channels: [] } }))[0]).toMatchObject({ loc: ['invoicePaid', 'channels'] });
    expect((await refused({ invoicePaid: { channels: ['sms'] } }))[0]).toMatchObject({ loc: ['invoicePaid', 'channels', 0] });

    // No channel can reach an account whose e-mail is unverified and that has no messenger linked.
    await gw.db.query('update users set email_verified = false, messenger_user_id = null where id = $1', [account.userId]);
    expect(await refused({ balanceBelow: { amountUsd: '1', channels: BOTH } })).toEqual([expect.objectContaining({ loc: ['balanceBelow', 'channels'], type: 'channel_unavailable' })]);
    // Nothing refused was saved.
    expect((await gql(account.token, `{ alertSettings { language balanceBelow { amountUsd } emailVerified messengerLinked } }`)).data.alertSettings).toEqual({ language: 'ru', balanceBelow: { amountUsd: '5.5' }, emailVerified: false, messengerLinked: false });
  });

  it('are served the same by tRPC', async () => {
    const account = await alertAccount();
    const client = trpcClient(gw.url, account.token);
    const saved = await client.alerts.update.mutate({ language: 'en', spendTodayAbove: { amountUsd: '3', channels: ['messenger'] } });
    expect(saved).toMatchObject({ language: 'en', spendTodayAbove: { amountUsd: '3', channels: ['messenger'] }, keyCapShares: [] });
    expect(await client.alerts.settings.query()).toEqual(saved);
    const refused = await client.alerts.update.mutate({ keyCapShares: [{ percent: 150, channels: ['email'] }] }).catch((error: unknown) => error as TRPCClientError<any>);
    expect(refused).toBeInstanceOf(TRPCClientError);
    expect((refused as TRPCClientError<any>).data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', issues: [{ loc: ['keyCapShares', 0, 'percent'] }] });
  });

  it('are the signed-in account’s only', async () => {
    const result = await gql('', `{ alertSettings { language } }`);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe.each(['en', 'ru'] as const)('threshold alerts fire once per crossing (%s)', (language) => {
  it('balance below: once, not again while below, again after a top-up brought it back above', async () => {
    const account = await alertAccount('10');
    await setAlerts(account, { language, balanceBelow: { amountUsd: '5', channels: BOTH } });
    await spend(account, '4');
    expectAlerts(account, 0);
    await spend(account, '1.5');
    const first = await waitForAlerts(account, 1);
    expect(first).toEqual(
      language === 'en'
        ? { subject: 'Baikal: balance below $5.00', text: 'Your balance is $4.50, below your alert at $5.00. Top up so requests keep working.' }
        : { subject: 'Baikal: баланс ниже 5,00\u00a0$', text: 'Баланс аккаунта 4,50\u00a0$ — ниже порога 5,00\u00a0$. Пополните баланс, чтобы запросы не остановились.' },
    );
    await spend(account, '0.0012345');
    expectAlerts(account, 1);
    await topUp(account, '10');
    expectAlerts(account, 1);
    await spend(account, '10');
    const second = await waitForAlerts(account, 2);
    expect(second!.text).toContain(language === 'en' ? '$4.4987655' : '4,4987655\u00a0$');
    // A raised amount the balance is below is a new crossing; saving the same rule again is not.
    await setAlerts(account, { language, balanceBelow: { amountUsd: '20', channels: BOTH } });
    expect((await waitForAlerts(account, 3))!.subject).toContain(language === 'en' ? '$20.00' : '20,00\u00a0$');
    await setAlerts(account, { language, balanceBelow: { amountUsd: '20', channels: BOTH } });
    await settle();
    expectAlerts(account, 3);
  });

  it('spend today above: once a UTC day', async () => {
    const account = await alertAccount('100');
    await setAlerts(account, { language, spendTodayAbove: { amountUsd: '2', channels: BOTH } });
    await spend(account, '1.5');
    expectAlerts(account, 0);
    await spend(account, '1');
    const first = await waitForAlerts(account, 1);
    const [{ day }] = await gw.db.query<{ day: string }>(`select to_char(now() at time zone 'utc', 'YYYY-MM-DD') as day`);
    expect(first!.text).toBe(language === 'en' ? `Spend on ${day} (UTC): $2.50, above your alert at $2.00.` : `Расход за ${day} (UTC): 2,50\u00a0$ — выше порога 2,00\u00a0$.`);
    await spend(account, '3');
    expectAlerts(account, 1);
    // The crossing was yesterday's: today's spend above the amount is a new crossing.
    await gw.db.query(`update alert_crossings set period = '2000-01-01' where user_id = $1 and subject = 'spend_today_above'`, [account.userId]);
    await spend(account, '0.01');
    expect((await waitForAlerts(account, 2))!.text).toContain(language === 'en' ? '$5.51' : '5,51\u00a0$');
  });

  it('a key at a share of its monthly cap: once, again for a raised cap', async () => {
    const account = await alertAccount('100');
    const key = await gw.services.keys.create(account.actor, { label: 'prod', monthlySpendCap: '10' });
    const other = await gw.services.keys.create(account.actor, { label: 'uncapped' });
    await setAlerts(account, { language, keyCapShares: [{ percent: 80, channels: BOTH }] });
    await spend(account, '5', key.id);
    await spend(account, '50', other.id);
    expectAlerts(account, 0);
    await spend(account, '3', key.id);
    const first = await waitForAlerts(account, 1);
    expect(first).toEqual(
      language === 'en'
        ? { subject: 'Baikal: key «prod» at 80% of its cap', text: 'Key «prod» has spent $8.00 of its $10.00 monthly cap (alert at 80%).' }
        : { subject: 'Baikal: ключ «prod» израсходовал 80% лимита', text: 'Ключ «prod» израсходовал 8,00\u00a0$ из месячного лимита 10,00\u00a0$ (порог 80%).' },
    );
    await spend(account, '1', key.id);
    expectAlerts(account, 1);
    // A raised cap puts the key below the share again; crossing the new share alerts again.
    await gw.db.query('update api_keys set monthly_spend_cap_usd = 20 where id = $1', [key.id]);
    await spend(account, '1', key.id);
    expectAlerts(account, 1);
    await spend(account, '6', key.id);
    expect((await waitForAlerts(account, 2))!.text).toContain(language === 'en' ? '$16.00 of its $20.00' : '16,00\u00a0$ из месячного лимита 20,00\u00a0$');
  });
});

describe.each(['en', 'ru'] as const)('event alerts fire once per invoice and task (%s)', (language) => {
  it('an invoice paid', async () => {
    const account = await alertAccount();
    const admin = await newAdmin(gw);
    await setAlerts(account, { language, invoicePaid: { channels: BOTH } });
    expect((await http(gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: {} })).status).toBe(200);
    const invoice = await http(gw.url, 'POST', '/payments/invoices', { token: account.token, body: { amount_usd: '12.5', method: 'usd_manual' } });
    expect(invoice.status, invoice.text).toBe(201);
    await gw.services.payments.markPaid(admin.actor, invoice.body.id);
    const mail = await waitForAlerts(account, 1);
    expect(mail).toEqual(
      language === 'en'
        ? { subject: 'Baikal: invoice paid', text: `Invoice ${invoice.body.id} is paid: $12.50 credited.` }
        : { subject: 'Baikal: счёт оплачен', text: `Счёт ${invoice.body.id} оплачен: на баланс зачислено 12,50\u00a0$.` },
    );
    await gw.services.payments.markPaid(admin.actor, invoice.body.id);
    await settle();
    expectAlerts(account, 1);
  });

  it('a video task finished: completed, and failed', async () => {
    const account = await alertAccount('50');
    await setAlerts(account, { language, videoFinished: { channels: BOTH } });
    const key = (await http(gw.url, 'POST', '/keys', { token: account.token, body: { provider_family: 'family_d' } })).body.key as string;
    const ok = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'a lake [sim:start-ms=10 video-ms=30]', seconds: 2 } });
    expect(ok.status, ok.text).toBe(201);
    const done = await waitForAlerts(account, 1);
    expect(done!.text).toBe(language === 'en' ? `Video ${ok.body.id} (beta3.0-t2v) is ready.` : `Видео ${ok.body.id} (beta3.0-t2v) готово.`);
    const bad = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'gamma_h3', prompt: 'a storm [sim:start-ms=10 video-ms=30 fail]' } });
    expect(bad.status, bad.text).toBe(201);
    const failed = await waitForAlerts(account, 2);
    expect(failed!.subject).toBe(language === 'en' ? 'Baikal: video failed' : 'Baikal: видео не получилось');
    // The task's update published again (a replay) alerts nothing more.
    gw.services.alerts.event(account.userId, { kind: 'video_finished', taskId: bad.body.id, model: 'gamma_h3', status: 'failed' });
    await settle();
    expectAlerts(account, 2);
  });
});

describe('alerts as webhooks', () => {
  it('a fired alert is an alert.triggered webhook, signed, with the alert’s figures', async () => {
    const receiver = await startReceiver();
    try {
      const account = await alertAccount('10');
      const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['alert.triggered'] });
      receiver.secrets.push(endpoint.secret);
      await setAlerts(account, { language: 'en', balanceBelow: { amountUsd: '5', channels: ['email'] } });
      await spend(account, '6');
      const [hook] = await waitFor('the alert.triggered webhook', () => (receiver.received.length ? receiver.received : null), 20_000);
      expect(hook!.verifiedBy).toEqual([0]);
      expect(hook!.body).toMatchObject({ type: 'alert.triggered', data: { alert: 'balance_below', thresholdUsd: '5', balanceUsd: '4' } });
      await spend(account, '1');
      await sleep(300);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});

describe('the onFired hook', () => {
  it('runs inside the crossing’s transaction: when it fails, nothing is sent and the next evaluation fires', async () => {
    const account = await alertAccount('10');
    await setAlerts(account, { language: 'en', balanceBelow: { amountUsd: '5', channels: ['email'] } });
    const sent: string[] = [];
    const hooked: { userId: string; kind: string; inTx: boolean }[] = [];
    let fail = true;
    const service = new AlertsService({
      orm: gw.database.orm,
      log: createLogger('silent'),
      settings: { coalesceMs: 10, defaultLanguage: 'en' },
      delivery: { brandName: 'Baikal', sendMail: async (to) => { sent.push(to); return true; }, sendMessenger: null },
      onFired: async (tx, userId, alert) => {
        const [row] = await tx.execute<{ n: number }[]>('select count(*)::int as n from alert_crossings where user_id = ?', [userId]);
        hooked.push({ userId, kind: alert.kind, inTx: row!.n === 1 });
        if (fail) throw new Error('the outbox is away');
      },
    });
    // Below the amount without a committed change the gateway's own evaluator would hear: only this service evaluates.
    await gw.db.query('update users set balance_paid_usd = 1 where id = $1', [account.userId]);
    await expect(service.evaluator.evaluate(account.userId)).rejects.toThrow('the outbox is away');
    expect(sent).toEqual([]);
    expect(await gw.db.query('select 1 from alert_crossings where user_id = $1', [account.userId])).toEqual([]);
    fail = false;
    expect((await service.evaluator.evaluate(account.userId)).map((a) => a.kind)).toEqual(['balance_below']);
    expect(sent).toEqual([account.email]);
    expect(hooked).toEqual([
      { userId: account.userId, kind: 'balance_below', inTx: true },
      { userId: account.userId, kind: 'balance_below', inTx: true },
    ]);
  });
});

describe('two gateway processes on one database', () => {
  it('never send the same alert twice', async () => {
    const account = await alertAccount('10');
    await setAlerts(account, { language: 'en', balanceBelow: { amountUsd: '5', channels: BOTH } });
    const second = await startGateway(loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATABASE_URL: gw.db.url, LOG_LEVEL: 'silent', ...env }), createLogger('silent'));
    try {
      const evaluators = [gw.services.alerts.evaluator, second.services.alerts.evaluator];
      for (let crossing = 1; crossing <= 3; crossing++) {
        // The balance crosses below (committed by the first), and both processes evaluate at once, several times.
        await gw.services.billing.post({ userId: account.userId, amountUsd: '-6', kind: 'usage', idempotencyKey: `race:${randomUUID()}` });
        const fired = await Promise.all(evaluators.flatMap((e) => [e.evaluate(account.userId), e.evaluate(account.userId), e.evaluate(account.userId)]));
        // At most one of the six calls fires (none if the first process's own scheduled evaluation was first).
        expect(fired.flat().length).toBeLessThanOrEqual(1);
        await settle();
        await second.services.alerts.evaluator.idle();
        expectAlerts(account, crossing);
        await gw.services.billing.post({ userId: account.userId, amountUsd: '6', kind: 'topup', bucket: 'paid', idempotencyKey: `race:${randomUUID()}` });
        await Promise.all(evaluators.map((e) => e.evaluate(account.userId)));
      }
    } finally {
      await second.stop();
    }
  });

});
