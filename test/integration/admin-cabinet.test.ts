import { describe, expect, it } from 'vitest';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { useTestGateway } from '../helpers/gateway.js';

/** The operator views the cabinet's admin pages read: accounts, their keys, invoices; ending sessions. */
describe('admin cabinet queries', () => {
  const gw = useTestGateway();

  it('searches accounts, lists keys and invoices, ends sessions; customers are refused', async () => {
    const admin = await newAdmin(gw);
    const customer = await newFundedAccount(gw, '12.5');
    const all = await gw.services.adminAccounts.search(admin.actor, {});
    expect(all.map((a) => a.userId)).toContain(customer.userId);
    const found = await gw.services.adminAccounts.search(admin.actor, { search: customer.input.username.toUpperCase() });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ userId: customer.userId, balanceUsd: '12.5', activeSessions: 1 });
    expect(await gw.services.adminAccounts.search(admin.actor, { search: '100%_' })).toEqual([]);
    expect(await gw.services.adminAccounts.keysOf(admin.actor, { userId: customer.userId })).toEqual([]);
    expect(await gw.services.payments.adminInvoices(admin.actor, { status: 'pending' })).toEqual([]);
    await expect(gw.services.payments.adminInvoices(admin.actor, { status: 'lost' })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(gw.services.adminAccounts.search(customer.actor, {})).rejects.toMatchObject({ code: 'forbidden' });
    const response = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` },
      body: JSON.stringify({ query: `query($s: String) { adminAccounts(search: $s, limit: 50) { userId username balanceUsd creditLimitUsd trustedPartnerUntil activeKeys activeSessions createdAt } adminInvoices(status: "pending", limit: 100) { id account } }`, variables: { s: customer.input.username } }),
    });
    const body = (await response.json()) as { data: { adminAccounts: { userId: string }[] } | null; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data!.adminAccounts.map((a) => a.userId)).toEqual([customer.userId]);
    expect(await gw.services.adminAccounts.endSessions(admin.actor, { userId: customer.userId })).toBe(1);
    expect(await gw.services.accounts.sessionActor(customer.actor.sessionId)).toBeNull();
  });

  it('lists pricing plans, the default first, with what an upsert stored; customers are refused', async () => {
    const admin = await newAdmin(gw);
    const customer = await newFundedAccount(gw, '1');
    const defaultPlan = gw.services.catalog.snapshot.defaultPlan;
    const overrides = { 'gen-5.6-luna': { tokens: { input: '0.01', output: '0.03' } } };
    await gw.services.catalog.upsertPlan(admin.actor, { id: 'acme-private', label: 'Acme', public: false, multiplier: '0.8', overrides });
    const plans = gw.services.catalog.plans(admin.actor);
    expect(plans[0]!.id).toBe(defaultPlan);
    expect(plans.find((plan) => plan.id === 'acme-private')).toEqual({ id: 'acme-private', label: 'Acme', public: false, multiplier: '0.8', overrides: { 'gen-5.6-luna': { tokens: { input: '0.01', output: '0.03', cacheRead: null, cacheWrite: null } } } });
    expect(() => gw.services.catalog.plans(customer.actor)).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });
});
