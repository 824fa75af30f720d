import type { AcceptAgreementInput, CreateInvoiceInput, ListInvoicesInput, PaymentConfigInput } from '../../payments/payments.schemas.js';
import { authedProcedure, router, typedInput } from '../trpc.js';

export const paymentsRouter = router({
  config: authedProcedure.input(typedInput<PaymentConfigInput | undefined>()).query(({ ctx, input }) => ctx.services.payments.config(ctx.actor, input ?? {})),
  acceptAgreement: authedProcedure
    .input(typedInput<AcceptAgreementInput | undefined>())
    .mutation(({ ctx, input }) => ctx.services.payments.acceptAgreement(ctx.actor, input ?? {}, ctx.caller.clientAddress)),
  invoices: authedProcedure.input(typedInput<ListInvoicesInput | undefined>()).query(({ ctx, input }) => ctx.services.payments.listInvoices(ctx.actor, input ?? {})),
  invoice: authedProcedure.input(typedInput<{ id: string }>()).query(({ ctx, input }) => ctx.services.payments.getInvoice(ctx.actor, input?.id)),
  createInvoice: authedProcedure.input(typedInput<CreateInvoiceInput>()).mutation(({ ctx, input }) => ctx.services.payments.createInvoice(ctx.actor, input)),
  /** Admin: marks an invoice paid (manual provider). */
  markInvoicePaid: authedProcedure
    .input(typedInput<{ id: string; reference?: string }>())
    .mutation(({ ctx, input }) => ctx.services.payments.markPaid(ctx.actor, input?.id, input?.reference)),
});
