/**
 * The organization money surface (wallet, usage, invoices, statements) as the authorization suites list it:
 * test/security/organization-billing-authz.test.ts checks each of these for every role, an outsider and an anonymous
 * caller, and checks that its own tables name exactly these; test/security/organizations.test.ts counts them as
 * listed in its completeness checks, so a new organization field, route or procedure fails one of the two suites
 * until it is listed with who may use it.
 */
export const ORGANIZATION_BILLING_SURFACE = {
  fields: ['createOrganizationInvoice', 'organizationBalance', 'organizationInvoices', 'organizationStatement', 'organizationUsage', 'organizationUsageSummary', 'organizationUsageTimeseries'],
  routes: [
    'GET /orgs/{organization_id}/balance',
    'GET /orgs/{organization_id}/invoices',
    'GET /orgs/{organization_id}/statements/{month}',
    'GET /orgs/{organization_id}/statements/{month}.csv',
    'GET /orgs/{organization_id}/statements/{month}.html',
    'GET /orgs/{organization_id}/usage',
    'GET /orgs/{organization_id}/usage.csv',
    'GET /orgs/{organization_id}/usage/summary',
    'GET /orgs/{organization_id}/usage/timeseries',
    'POST /orgs/{organization_id}/invoices',
  ],
  procedures: [
    'organizationBilling.balance',
    'organizationBilling.createInvoice',
    'organizationBilling.invoices',
    'organizationBilling.statement',
    'organizationBilling.usage',
    'organizationBilling.usageSummary',
    'organizationBilling.usageTimeseries',
  ],
};
