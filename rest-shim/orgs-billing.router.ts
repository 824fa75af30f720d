import { Router, type Response } from 'express';
import { z } from 'zod';
import type { BalanceView } from '../src/billing/balance-events.js';
import type { RequestContext } from '../src/context.js';
import type { OrganizationAccess } from '../src/organizations/organizations.service.js';
import type { Capability } from '../src/organizations/roles.js';
import { createInvoiceInput, listInvoicesInput } from '../src/payments/payments.schemas.js';
import type { Actor } from '../src/shared/actor.js';
import { DomainError } from '../src/shared/errors.js';
import { STATEMENT_CSP, statementCsv, statementHtml, statementLanguage, type StatementView } from '../src/usage/organization-statement.js';
import {
  organizationSummaryQuery,
  organizationTimeseriesQuery,
  organizationUsageCsvQuery,
  organizationUsageQuery,
  statementInput,
  type OrganizationSummaryView,
  type OrganizationUsageEventView,
} from '../src/usage/organization-usage.js';
import { decimal, timestamp } from './answer-fields.js';
import { authed, SpecNames, withInput } from './handler.js';
import { invoiceAnswer, invoiceJson } from './payments.router.js';
import { reply, routes, serve } from './route.js';
import { totalsAnswer, totalsJson, usageEventAnswer, usageEventJson, usageTimeseriesAnswer, usageTimeseriesJson } from './usage.router.js';

const balanceAnswer = z
  .object({ paid_usd: decimal, bonus_usd: decimal, balance_usd: decimal, held_usd: decimal, available_usd: decimal, at: timestamp })
  .meta({ id: 'OrganizationBalance', description: 'The organization’s wallet now: paid and bonus balance, what admission holds, what requests may spend.' });

const balanceJson = (b: BalanceView): z.infer<typeof balanceAnswer> => ({
  paid_usd: b.paidUsd, bonus_usd: b.bonusUsd, balance_usd: b.balanceUsd, held_usd: b.heldUsd, available_usd: b.availableUsd, at: b.at.toISOString(),
});

const orgEventAnswer = usageEventAnswer
  .extend({ member_id: z.string().nullable(), member_name: z.string().nullable(), api_key_id: z.string().nullable(), api_key_label: z.string().nullable() })
  .meta({ id: 'OrganizationUsageEvent', description: 'A usage event of the organization, with the member who made the key it was made with.' });

const orgEventJson = (e: OrganizationUsageEventView): z.infer<typeof orgEventAnswer> => ({
  ...usageEventJson(e), member_id: e.memberId, member_name: e.memberName, api_key_id: e.apiKeyId, api_key_label: e.apiKeyLabel,
});

const summaryAnswer = z
  .object({ group_by: z.enum(['member', 'key', 'model']), totals: totalsAnswer, groups: z.array(totalsAnswer.extend({ key: z.string(), label: z.string() })) })
  .meta({ id: 'OrganizationUsageSummary', description: 'Totals over a period, in all and by member, key or model.' });

const summaryJson = (s: OrganizationSummaryView): z.infer<typeof summaryAnswer> => ({
  group_by: s.groupBy, totals: totalsJson(s.totals), groups: s.groups.map((g) => ({ key: g.key, label: g.label, ...totalsJson(g.totals) })),
});

const spendRow = { spend: decimal, requests: z.int() };
const statementAnswer = z
  .object({
    organization_id: z.string(), organization_name: z.string(), month: z.string(), from_: timestamp, to: timestamp,
    opening_balance: decimal, closing_balance: decimal, invoices_credited: decimal, total_spend: decimal, other_changes: decimal,
    invoices: z.array(z.object({ id: z.string(), amount: decimal, bonus: decimal, currency: z.string(), amount_requested: decimal, status: z.string(), created_at: timestamp, paid_at: timestamp.nullable() })),
    by_member: z.array(z.object({ user_id: z.string(), name: z.string(), ...spendRow })),
    by_model: z.array(z.object({ model: z.string(), ...spendRow })),
    by_key: z.array(z.object({ api_key_id: z.string().nullable(), label: z.string().nullable(), member_name: z.string().nullable(), ...spendRow })),
  })
  .meta({ id: 'OrganizationStatement', description: 'A UTC month: closing_balance = opening_balance + invoices_credited - total_spend + other_changes, as the ledger has it.' });

function statementJson(s: StatementView): z.infer<typeof statementAnswer> {
  return {
    organization_id: s.organizationId, organization_name: s.organizationName, month: s.month, from_: s.from.toISOString(), to: s.to.toISOString(),
    opening_balance: s.openingBalance, closing_balance: s.closingBalance, invoices_credited: s.invoicesCredited, total_spend: s.totalSpend, other_changes: s.otherChanges,
    invoices: s.invoices.map((i) => ({ id: i.id, amount: i.amount, bonus: i.bonus, currency: i.currency, amount_requested: i.amountRequested, status: i.status, created_at: i.createdAt.toISOString(), paid_at: i.paidAt?.toISOString() ?? null })),
    by_member: s.byMember.map((m) => ({ user_id: m.userId, name: m.name, spend: m.spend, requests: m.requests })),
    by_model: s.byModel,
    by_key: s.byKey.map((k) => ({ api_key_id: k.apiKeyId, label: k.label, member_name: k.memberName, spend: k.spend, requests: k.requests })),
  };
}

const orgPath = new SpecNames(z.object({ organization_id: z.string() }));
const monthPath = new SpecNames(z.object({ organization_id: z.string(), month: statementInput.shape.month }));
const csv = { description: 'CSV (UTF-8, CRLF lines)', media: 'text/csv' };

/** Issue 56: an organization's wallet, usage by member and key, and statements (mounted with the other /orgs routes). */
export const ORG_BILLING_ROUTES = routes('/orgs', 'organizations', {
  balance: { method: 'get', at: '/:organization_id/balance', summary: 'The organization’s balance (owner, admin, billing)', access: 'session', params: orgPath, answers: { 200: { description: 'Balance', json: balanceAnswer } } },
  usage: {
    method: 'get', at: '/:organization_id/usage', summary: 'The organization’s usage events, newest first (a plain member: their own keys’)', access: 'session', params: orgPath,
    query: new SpecNames(organizationUsageQuery), answers: { 200: { description: 'Usage list', json: z.object({ items: z.array(orgEventAnswer), limit: z.int() }) } },
  },
  usageCsv: { method: 'get', at: '/:organization_id/usage.csv', summary: 'The same events as CSV (at most 20 000)', access: 'session', params: orgPath, query: new SpecNames(organizationUsageCsvQuery), answers: { 200: csv } },
  usageSummary: {
    method: 'get', at: '/:organization_id/usage/summary', summary: 'Usage totals by member, key or model', access: 'session', params: orgPath,
    query: new SpecNames(organizationSummaryQuery), answers: { 200: { description: 'Summary', json: summaryAnswer } },
  },
  usageTimeseries: {
    method: 'get', at: '/:organization_id/usage/timeseries', summary: 'Usage per time bucket', access: 'session', params: orgPath,
    query: new SpecNames(organizationTimeseriesQuery), answers: { 200: { description: 'Usage timeseries', json: usageTimeseriesAnswer } },
  },
  invoices: {
    method: 'get', at: '/:organization_id/invoices', summary: 'The organization’s invoices, newest first (owner, billing)', access: 'session', params: orgPath,
    query: new SpecNames(listInvoicesInput), answers: { 200: { description: 'Invoices', json: z.object({ items: z.array(invoiceAnswer) }) } },
  },
  createInvoice: {
    method: 'post', at: '/:organization_id/invoices', summary: 'An invoice funding the organization’s wallet (owner, billing)', access: 'session', params: orgPath,
    body: new SpecNames(createInvoiceInput), answers: { 201: { description: 'Invoice', json: invoiceAnswer } },
  },
  statementCsv: { method: 'get', at: '/:organization_id/statements/:month.csv', summary: 'The month’s statement as CSV (owner, billing)', access: 'session', params: monthPath, answers: { 200: csv } },
  statementHtml: {
    method: 'get', at: '/:organization_id/statements/:month.html', summary: 'The month’s statement as a printable page, in `lang` (ru, en) or the browser’s language', access: 'session', params: monthPath,
    answers: { 200: { description: 'HTML page', media: 'text/html' } },
  },
  statement: { method: 'get', at: '/:organization_id/statements/:month', summary: 'The month’s statement (owner, billing)', access: 'session', params: monthPath, answers: { 200: { description: 'Statement', json: statementAnswer } } },
});

/** The caller's standing in the organization, first thing (outsiders: 404); a malformed id is located at the path's `id`. */
async function access(ctx: RequestContext, actor: Actor, id: unknown, capability?: Capability): Promise<OrganizationAccess> {
  try {
    return await ctx.services.organizations.access(actor, String(id ?? ''), capability);
  } catch (error) {
    throw error instanceof DomainError ? error.withLocs((loc) => ['path', ...loc.map((part) => (part === 'organizationId' ? 'organization_id' : part))]) : error;
  }
}

function send(res: Response, type: string, body: string, filename?: string): void {
  if (filename) res.setHeader('content-disposition', `attachment; filename="${filename}"`);
  res.status(200).type(type).send(body);
}

export function orgsBillingRouter(): Router {
  const router = Router();
  const r = ORG_BILLING_ROUTES;
  const usage = (ctx: RequestContext) => ctx.services.organizationUsage;

  serve(router, r.balance, authed(async (actor, ctx, req, res) => reply(res, r.balance, 200, balanceJson(await usage(ctx).balance(await access(ctx, actor, req.params.organization_id))))));
  serve(router, r.usage, authed(async (actor, ctx, req, res) => {
    const granted = await access(ctx, actor, req.params.organization_id);
    const page = await withInput('query', r.usage.query, req.query, (query) => usage(ctx).list(granted, query));
    reply(res, r.usage, 200, { items: page.items.map(orgEventJson), limit: page.limit });
  }));
  serve(router, r.usageCsv, authed(async (actor, ctx, req, res) => {
    const granted = await access(ctx, actor, req.params.organization_id);
    send(res, 'text/csv; charset=utf-8', await withInput('query', r.usageCsv.query, req.query, (query) => usage(ctx).csv(granted, query)), `usage-${granted.organizationId}.csv`);
  }));
  serve(router, r.usageSummary, authed(async (actor, ctx, req, res) => {
    const granted = await access(ctx, actor, req.params.organization_id);
    reply(res, r.usageSummary, 200, summaryJson(await withInput('query', r.usageSummary.query, req.query, (query) => usage(ctx).summary(granted, query))));
  }));
  serve(router, r.usageTimeseries, authed(async (actor, ctx, req, res) => {
    const granted = await access(ctx, actor, req.params.organization_id);
    reply(res, r.usageTimeseries, 200, usageTimeseriesJson(await withInput('query', r.usageTimeseries.query, req.query, (query) => usage(ctx).timeseries(granted, query))));
  }));
  serveInvoices(router);
  serveStatements(router);
  return router;
}

function serveInvoices(router: Router): void {
  const { invoices, createInvoice } = ORG_BILLING_ROUTES;
  serve(router, invoices, authed(async (actor, ctx, req, res) => {
    const granted = await access(ctx, actor, req.params.organization_id, 'billing');
    const items = await withInput('query', invoices.query, req.query, (query) => ctx.services.payments.organizationInvoices(granted, query));
    reply(res, invoices, 200, { items: items.map(invoiceJson) });
  }));
  serve(router, createInvoice, authed(async (actor, ctx, req, res) => {
    const granted = await access(ctx, actor, req.params.organization_id, 'billing');
    const created = await withInput('body', createInvoice.body, req.body ?? {}, (input) => ctx.services.payments.createOrganizationInvoice(actor, granted, input));
    reply(res, createInvoice, 201, invoiceJson(created));
  }));
}

/** The .csv and .html forms are registered before the JSON one, whose `:month` would also take `2026-01.csv`. */
function serveStatements(router: Router): void {
  const { statement, statementCsv: asCsv, statementHtml: asHtml } = ORG_BILLING_ROUTES;
  const load = async (ctx: RequestContext, actor: Actor, params: Record<string, unknown>) => {
    const granted = await access(ctx, actor, params.organization_id, 'billing');
    return withInput('path', monthPath, { month: params.month }, (input) => ctx.services.organizationUsage.statement(granted, { month: String(input.month ?? '') }));
  };
  serve(router, asCsv, authed(async (actor, ctx, req, res) => {
    const s = await load(ctx, actor, req.params);
    send(res, 'text/csv; charset=utf-8', statementCsv(s), `statement-${s.month}.csv`);
  }));
  serve(router, asHtml, authed(async (actor, ctx, req, res) => {
    const s = await load(ctx, actor, req.params);
    res.setHeader('content-security-policy', STATEMENT_CSP);
    send(res, 'text/html; charset=utf-8', statementHtml(s, statementLanguage(req.query.lang, req.get('accept-language'))));
  }));
  serve(router, statement, authed(async (actor, ctx, req, res) => reply(res, statement, 200, statementJson(await load(ctx, actor, req.params)))));
}
