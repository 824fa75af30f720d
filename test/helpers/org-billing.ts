import { createHmac, randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import type { Role } from '../../src/organizations/roles.js';
import { newFundedAccount as newUnverifiedAccount } from './accounts.js';
import { http } from './clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from './config.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { PAYMENTS } from './payments.js';

export type Person = Awaited<ReturnType<typeof newUnverifiedAccount>>;

/** The chat models the simulator serves in these tests. */
export const MODELS = ['gen-5.6-luna', 'zeta-5.2'] as const;

/**
 * A gateway for the organizations' money tests: PAYMENTS (checkout with a webhook secret, bonus tiers, an
 * agreement) and one simulated upstream, so /v1 calls are real and billed. Started before the file's tests.
 */
export function useOrgBillingGateway() {
  const secret = `whsec-${randomUUID()}`;
  const state = {} as { gw: TestGateway; sim: Simulator; configFile: string };
  beforeAll(async () => {
    state.sim = await startSimulator({ apiKey: 'org-upstream-secret' });
    state.configFile = operatorConfigFile({
      payments: PAYMENTS,
      upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `${state.sim.url}/v1`, credentialEnv: 'ORG_UPSTREAM_KEY', routes: [{ group: 'cheap', models: MODELS }] }],
    });
    state.gw = await startTestGateway({ BAIKAL_CONFIG: state.configFile, ORG_UPSTREAM_KEY: 'org-upstream-secret', TEST_CHECKOUT_SECRET: secret, VIDEO_WORKERS: '0' });
  });
  afterAll(async () => {
    await state.gw?.close();
    await state.sim?.close();
    if (state.configFile) removeOperatorConfigFile(state.configFile);
  });

  /** A person with a verified e-mail who accepted the agreement (what an invoice asks of its maker). */
  async function person(options: { verified?: boolean; accepted?: boolean } = {}): Promise<Person> {
    const account = await newUnverifiedAccount(state.gw);
    if (options.verified !== false) await state.gw.db.query('update users set email_verified = true where id = $1', [account.userId]);
    if (options.accepted !== false && options.verified !== false) {
      const response = await http(state.gw.url, 'POST', '/payments/agreements/accept', { token: account.token, body: {} });
      expect(response.status, response.text).toBe(200);
    }
    return account;
  }

  /**
   * An organization owned by `owner`, with the others as members in their roles. Members are added in the
   * database (the invitation flow is the membership suite's to test); the organization is made by the service.
   */
  async function organization(name: string, owner: Person, members: [Person, Exclude<Role, 'owner'>][] = []): Promise<string> {
    const org = await state.gw.services.organizations.create(owner.actor, { name });
    for (const [member, role] of members) {
      await state.gw.db.query('insert into organization_members (organization_id, user_id, role) values ($1, $2, $3)', [org.id, member.userId, role]);
    }
    return org.id;
  }

  /** A key of the organization made by `member`: its secret. */
  async function orgKey(organizationId: string, member: Person, label: string): Promise<{ id: string; key: string }> {
    const created = await state.gw.services.organizations.createKey(member.actor, organizationId, { label });
    return { id: created.id, key: created.key };
  }

  /** One billed chat completion through /v1 with `key`. */
  async function chat(key: string, model: string, words: number): Promise<void> {
    await new OpenAI({ apiKey: key, baseURL: `${state.gw.url}/v1`, maxRetries: 0 }).chat.completions.create({ model, messages: [{ role: 'user', content: `hello [sim:words=${words}]` }] });
  }

  /** The checkout provider confirms an invoice as paid (a signed webhook, as the hosted page's provider sends it). */
  async function pay(invoice: { id: string; amount_requested: string; currency: string }): Promise<void> {
    const raw = JSON.stringify({ id: `evt_${randomUUID()}`, type: 'invoice.paid', invoice_id: invoice.id, amount: invoice.amount_requested, currency: invoice.currency, created: Math.floor(Date.now() / 1000) });
    const t = Math.floor(Date.now() / 1000);
    const signature = `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
    const paid = await http(state.gw.url, 'POST', '/payments/webhooks/checkout', { rawBody: raw, headers: { 'x-checkout-signature': signature } });
    expect(paid.status, paid.text).toBe(200);
    expect(paid.body.outcome).toBe('applied');
  }

  async function gql(query: string, variables: Record<string, unknown> = {}, token?: string) {
    const response = await http(state.gw.url, 'POST', '/graphql', { token, body: { query, variables } });
    return response.body as { data: any; errors?: { message: string; extensions?: Record<string, any> }[] };
  }

  return { state, person, organization, orgKey, chat, pay, gql };
}

/** The ledger's sum and the stored balances of a ledger owner. */
export async function ledgerOf(gw: TestGateway, userId: string): Promise<{ ledger: string; balance: string }> {
  const [row] = await gw.db.query<{ ledger: string; balance: string }>(
    `select coalesce((select sum(amount_usd) from transactions where user_id = u.id), 0)::text as ledger, (u.balance_paid_usd + u.balance_bonus_usd)::text as balance
       from users u where u.id = $1`,
    [userId],
  );
  return row!;
}
