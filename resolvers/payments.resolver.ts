import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import type { PaymentLanguage } from '../src/payments/payments.schemas.js';
import { Topics, type InvoiceEventPayload } from '../src/shared/pubsub.js';
import { domainInput } from './args.js';
import { AgreementAcceptance, Invoice, PaymentConfig } from './types/payments.types.js';

@Resolver()
export class PaymentsResolver {
  @Query(() => PaymentConfig, { description: 'Payment methods, rates, agreement texts and the signed-in user’s balances and acceptance.' })
  async paymentConfig(
    @Ctx() ctx: RequestContext,
    @Arg('language', () => String, { nullable: true, description: '`ru` (default) or `en`.' }) language?: string | null,
  ): Promise<PaymentConfig> {
    return ctx.services.payments.config(requireActor(ctx), domainInput({ language: language as PaymentLanguage | null | undefined }));
  }

  @Query(() => [Invoice], { description: 'The signed-in user’s invoices, newest first (limit 1-100, default 25).' })
  async invoices(@Ctx() ctx: RequestContext, @Arg('limit', () => Int, { nullable: true }) limit?: number | null): Promise<Invoice[]> {
    return ctx.services.payments.listInvoices(requireActor(ctx), domainInput({ limit }));
  }

  @Query(() => Invoice, { description: 'One of the signed-in user’s invoices; unknown or foreign ids are NOT_FOUND.' })
  async invoice(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<Invoice> {
    return ctx.services.payments.getInvoice(requireActor(ctx), id);
  }

  @Mutation(() => AgreementAcceptance, { description: 'Accepts the current terms and privacy versions.' })
  async acceptAgreement(
    @Ctx() ctx: RequestContext,
    @Arg('language', () => String, { nullable: true }) language?: string | null,
    @Arg('surface', () => String, { nullable: true }) surface?: string | null,
  ): Promise<AgreementAcceptance> {
    return ctx.services.payments.acceptAgreement(
      requireActor(ctx),
      domainInput({ language: language as PaymentLanguage | null | undefined, surface }),
      ctx.caller.clientAddress,
    );
  }

  @Mutation(() => Invoice, { description: 'Creates a top-up invoice (needs the current agreement accepted).' })
  async createInvoice(
    @Ctx() ctx: RequestContext,
    @Arg('amountUsd', () => String, { description: 'A decimal string, e.g. "25.50".' }) amountUsd: string,
    @Arg('method', () => String) method: string,
  ): Promise<Invoice> {
    return ctx.services.payments.createInvoice(requireActor(ctx), { amountUsd, method });
  }

  @Mutation(() => Invoice, { description: 'Admin: marks an invoice paid (manual provider) and credits it once; repeating it changes nothing.' })
  async markInvoicePaid(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('reference', () => String, { nullable: true }) reference?: string | null,
  ): Promise<Invoice> {
    return ctx.services.payments.markPaid(requireActor(ctx), id, reference ?? undefined);
  }

  @Subscription(() => Invoice, {
    description: 'Every status change of the subscriber’s invoices.',
    topics: Topics.InvoiceUpdated,
    topicId: ({ context }: { context: RequestContext }) => requireActor(context).userId,
  })
  invoiceUpdated(@Root() event: InvoiceEventPayload): Invoice {
    return event;
  }
}
