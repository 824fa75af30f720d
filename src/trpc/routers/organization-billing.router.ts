import { createInvoiceInput, listInvoicesInput } from '../../payments/payments.schemas.js';
import { organizationIdInput } from '../../organizations/organizations.schemas.js';
import type { Capability } from '../../organizations/roles.js';
import { organizationSummaryQuery, organizationTimeseriesQuery, organizationUsageQuery, statementInput } from '../../usage/organization-usage.js';
import type { Actor } from '../../shared/actor.js';
import type { RequestContext } from '../../context.js';
import { authedProcedure, router, serviceInput } from '../trpc.js';

/** Every input names its organization; the rest is the service's own input. */
const org = organizationIdInput.shape;
const usageIn = organizationUsageQuery.extend(org);
const summaryIn = organizationSummaryQuery.extend(org);
const timeseriesIn = organizationTimeseriesQuery.extend(org);
const statementIn = statementInput.extend(org);
const invoicesIn = listInvoicesInput.extend(org);
const createInvoiceIn = createInvoiceInput.extend(org);

/** The caller's standing in the organization, first thing (outsiders: NOT_FOUND); the rest of the input goes on to the service. */
async function granted<T extends { organizationId?: unknown }>(ctx: RequestContext & { actor: Actor }, input: T | undefined, capability?: Capability) {
  const { organizationId, ...rest } = input ?? ({} as T);
  const access = await ctx.services.organizations.access(ctx.actor, organizationId as string, capability);
  return { access, rest: rest as Omit<T, 'organizationId'> };
}

/** An organization's wallet, usage by member and key, and statements (issue 56): the same operations as GraphQL's. */
export const organizationBillingRouter = router({
  balance: authedProcedure.input(serviceInput(organizationIdInput)).query(async ({ ctx, input }) => ctx.services.organizationUsage.balance((await granted(ctx, input)).access)),
  usage: authedProcedure.input(serviceInput(usageIn)).query(async ({ ctx, input }) => {
    const { access, rest } = await granted(ctx, input);
    return ctx.services.organizationUsage.list(access, rest);
  }),
  usageSummary: authedProcedure.input(serviceInput(summaryIn)).query(async ({ ctx, input }) => {
    const { access, rest } = await granted(ctx, input);
    return ctx.services.organizationUsage.summary(access, rest);
  }),
  usageTimeseries: authedProcedure.input(serviceInput(timeseriesIn)).query(async ({ ctx, input }) => {
    const { access, rest } = await granted(ctx, input);
    return ctx.services.organizationUsage.timeseries(access, rest);
  }),
  statement: authedProcedure.input(serviceInput(statementIn)).query(async ({ ctx, input }) => {
    const { access, rest } = await granted(ctx, input, 'billing');
    return ctx.services.organizationUsage.statement(access, rest);
  }),
  invoices: authedProcedure.input(serviceInput(invoicesIn)).query(async ({ ctx, input }) => {
    const { access, rest } = await granted(ctx, input, 'billing');
    return ctx.services.payments.organizationInvoices(access, rest);
  }),
  createInvoice: authedProcedure.input(serviceInput(createInvoiceIn)).mutation(async ({ ctx, input }) => {
    const { access, rest } = await granted(ctx, input, 'billing');
    return ctx.services.payments.createOrganizationInvoice(ctx.actor, access, rest);
  }),
});
