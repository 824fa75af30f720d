import { z } from 'zod';
import { acceptAgreementInput, createInvoiceInput, invoiceIdInput, listInvoicesInput, markInvoicePaidInput, paymentConfigInput } from '../../payments/payments.schemas.js';
import { authedProcedure, optionalServiceInput, router, serviceInput } from '../trpc.js';

/** An invoice by id: the service's own id field, named `id` on this surface. */
const byId = z.object({ id: invoiceIdInput.shape.invoiceId });
const markPaidInput = byId.extend({ reference: markInvoicePaidInput.shape.reference });

export const paymentsRouter = router({
  config: authedProcedure.input(optionalServiceInput(paymentConfigInput)).query(({ ctx, input }) => ctx.services.payments.config(ctx.actor, input ?? {})),
  acceptAgreement: authedProcedure
    .input(optionalServiceInput(acceptAgreementInput))
    .mutation(({ ctx, input }) => ctx.services.payments.acceptAgreement(ctx.actor, input ?? {}, ctx.caller.clientAddress)),
  invoices: authedProcedure.input(optionalServiceInput(listInvoicesInput)).query(({ ctx, input }) => ctx.services.payments.listInvoices(ctx.actor, input ?? {})),
  invoice: authedProcedure.input(serviceInput(byId)).query(({ ctx, input }) => ctx.services.payments.getInvoice(ctx.actor, input?.id)),
  createInvoice: authedProcedure.input(serviceInput(createInvoiceInput)).mutation(({ ctx, input }) => ctx.services.payments.createInvoice(ctx.actor, input)),
  /** Admin: marks an invoice paid (manual provider). */
  markInvoicePaid: authedProcedure.input(serviceInput(markPaidInput)).mutation(({ ctx, input }) => ctx.services.payments.markPaid(ctx.actor, input?.id, input?.reference)),
});
