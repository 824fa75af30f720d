/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation Logout {\n    logout\n  }\n": typeof types.LogoutDocument,
    "\n  query Organizations {\n    organizations {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n      createdAt\n    }\n  }\n": typeof types.OrganizationsDocument,
    "\n  query AdminAccounts($search: String) {\n    adminAccounts(search: $search, limit: 50) {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n      paidBalanceUsd\n      bonusBalanceUsd\n      creditLimitUsd\n      trustedPartnerUntil\n      concurrencyLimit\n      activeKeys\n      activeSessions\n      createdAt\n    }\n  }\n": typeof types.AdminAccountsDocument,
    "\n  query AdminAccountKeys($userId: ID!) {\n    adminAccountKeys(userId: $userId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      rpmLimit\n      concurrencyLimit\n      revokedAt\n    }\n  }\n": typeof types.AdminAccountKeysDocument,
    "\n  mutation AdjustBalance($input: AdjustBalanceInput!) {\n    adjustBalance(input: $input) {\n      transactionId\n      amountUsd\n      applied\n    }\n  }\n": typeof types.AdjustBalanceDocument,
    "\n  mutation SetTrustedPartner($input: TrustedPartnerInput!) {\n    setTrustedPartner(input: $input) {\n      userId\n    }\n  }\n": typeof types.SetTrustedPartnerDocument,
    "\n  mutation RevokeTrustedPartner($userId: ID!) {\n    revokeTrustedPartner(userId: $userId) {\n      userId\n    }\n  }\n": typeof types.RevokeTrustedPartnerDocument,
    "\n  mutation EndSessions($userId: ID!) {\n    endSessions(userId: $userId)\n  }\n": typeof types.EndSessionsDocument,
    "\n  mutation SetKeyLimits($input: KeyLimitsInput!) {\n    setKeyLimits(input: $input) {\n      keyId\n    }\n  }\n": typeof types.SetKeyLimitsDocument,
    "\n  query AdminAnnouncements {\n    adminAnnouncements {\n      id\n      titleEn\n      titleRu\n      bodyEn\n      bodyRu\n      published\n      publishedAt\n      updatedAt\n    }\n  }\n": typeof types.AdminAnnouncementsDocument,
    "\n  mutation CreateAnnouncement($input: CreateAnnouncementInput!) {\n    createAnnouncement(input: $input) {\n      id\n    }\n  }\n": typeof types.CreateAnnouncementDocument,
    "\n  mutation PublishAnnouncement($id: ID!) {\n    publishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n": typeof types.PublishAnnouncementDocument,
    "\n  mutation UnpublishAnnouncement($id: ID!) {\n    unpublishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n": typeof types.UnpublishAnnouncementDocument,
    "\n  mutation SetModelPrices($modelId: ID!, $group: ID!, $prices: JSONObject!) {\n    setModelPrices(modelId: $modelId, group: $group, prices: $prices) {\n      id\n      groups {\n        id\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n": typeof types.SetModelPricesDocument,
    "\n  mutation UpsertCatalogModel($model: JSONObject!) {\n    upsertCatalogModel(model: $model) {\n      id\n    }\n  }\n": typeof types.UpsertCatalogModelDocument,
    "\n  query AdminInvoices($status: String) {\n    adminInvoices(status: $status, limit: 100) {\n      id\n      account\n      method\n      amountRequested\n      currency\n      usdCredit\n      bonusUsd\n      status\n      createdAt\n      paidAt\n    }\n  }\n": typeof types.AdminInvoicesDocument,
    "\n  mutation MarkInvoicePaid($id: ID!, $reference: String) {\n    markInvoicePaid(id: $id, reference: $reference) {\n      id\n      status\n    }\n  }\n": typeof types.MarkInvoicePaidDocument,
    "\n  fragment CabinetMarginRowFields on MarginRow {\n    key\n    requests\n    revenueUsd\n    upstreamCostUsd\n    marginUsd\n    uncostedRequests\n    uncostedRevenueUsd\n  }\n": typeof types.CabinetMarginRowFieldsFragmentDoc,
    "\n  query AdminMarginReport($from: DateTimeISO!, $to: DateTimeISO!) {\n    adminMargin(from: $from, to: $to) {\n      from\n      to\n      totals {\n        ...CabinetMarginRowFields\n      }\n      byDay {\n        ...CabinetMarginRowFields\n      }\n      byModel {\n        ...CabinetMarginRowFields\n      }\n      byGroup {\n        ...CabinetMarginRowFields\n      }\n      byUpstream {\n        ...CabinetMarginRowFields\n      }\n    }\n  }\n": typeof types.AdminMarginReportDocument,
    "\n  query AdminUpstreamInvoice($from: DateTimeISO!, $to: DateTimeISO!, $upstreamId: String) {\n    adminUpstreamUsage(from: $from, to: $to, upstreamId: $upstreamId) {\n      upstreamId\n      model\n      requests\n      inputTokens\n      cacheReadTokens\n      cacheWriteTokens\n      outputTokens\n      images\n      costUsd\n      uncostedRequests\n    }\n  }\n": typeof types.AdminUpstreamInvoiceDocument,
    "\n  query AdminPricingPlans {\n    adminPricingPlans {\n      id\n      label\n      public\n      multiplier\n      overrides\n    }\n  }\n": typeof types.AdminPricingPlansDocument,
    "\n  mutation AdminUpsertPricingPlan($input: PricingPlanInput!) {\n    upsertPricingPlan(input: $input) {\n      id\n    }\n  }\n": typeof types.AdminUpsertPricingPlanDocument,
    "\n  fragment CabinetUpstreamFields on AdminUpstream {\n    id\n    kind\n    baseUrl\n    enabled\n    active\n    inactiveReason\n    maxConcurrent\n    nativeResponses\n    fallback\n    timeouts {\n      connectMs\n      firstByteMs\n      idleMs\n      keepAliveMs\n    }\n    health {\n      windowSeconds\n      minFailures\n      failureRate\n      cooldownSeconds\n    }\n    credentials {\n      id\n      routingId\n      label\n      source\n      last4\n      env\n      enabled\n      maxConcurrent\n      usable\n      problem\n    }\n    routes {\n      id\n      model\n      group\n      upstreamModel\n      weight\n      priority\n      enabled\n    }\n    prices {\n      model\n      inputPer1m\n      outputPer1m\n      cacheReadPer1m\n      cacheWritePer1m\n      perImage\n      perVideoSecond\n    }\n  }\n": typeof types.CabinetUpstreamFieldsFragmentDoc,
    "\n  query AdminUpstreamList {\n    adminUpstreams {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminUpstreamListDocument,
    "\n  mutation AdminCreateUpstream($input: CreateUpstreamInput!) {\n    createUpstream(input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminCreateUpstreamDocument,
    "\n  mutation AdminUpdateUpstream($id: ID!, $input: UpdateUpstreamInput!) {\n    updateUpstream(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminUpdateUpstreamDocument,
    "\n  mutation AdminSetUpstreamEnabled($id: ID!, $enabled: Boolean!) {\n    setUpstreamEnabled(id: $id, enabled: $enabled) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminSetUpstreamEnabledDocument,
    "\n  mutation AdminDeleteUpstream($id: ID!) {\n    deleteUpstream(id: $id)\n  }\n": typeof types.AdminDeleteUpstreamDocument,
    "\n  mutation AdminAddUpstreamCredential($upstreamId: ID!, $input: UpstreamCredentialInput!) {\n    addUpstreamCredential(upstreamId: $upstreamId, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminAddUpstreamCredentialDocument,
    "\n  mutation AdminUpdateUpstreamCredential($id: ID!, $input: UpstreamCredentialInput!) {\n    updateUpstreamCredential(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminUpdateUpstreamCredentialDocument,
    "\n  mutation AdminDeleteUpstreamCredential($id: ID!) {\n    deleteUpstreamCredential(id: $id) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminDeleteUpstreamCredentialDocument,
    "\n  mutation AdminSetUpstreamRoutes($upstreamId: ID!, $routes: [UpstreamRouteInput!]!) {\n    setUpstreamRoutes(upstreamId: $upstreamId, routes: $routes) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminSetUpstreamRoutesDocument,
    "\n  mutation AdminSetUpstreamPrices($upstreamId: ID!, $prices: [UpstreamPriceInput!]!) {\n    setUpstreamPrices(upstreamId: $upstreamId, prices: $prices) {\n      ...CabinetUpstreamFields\n    }\n  }\n": typeof types.AdminSetUpstreamPricesDocument,
    "\n  mutation AdminTestUpstreamCredential($input: UpstreamTestInput!) {\n    testUpstreamCredential(input: $input) {\n      ok\n      status\n      latencyMs\n      outcome\n      model\n    }\n  }\n": typeof types.AdminTestUpstreamCredentialDocument,
    "\n  query AdminCredentialHealth {\n    adminUpstreamHealth {\n      upstreamId\n      credentialId\n      label\n      state\n      until\n      inFlight\n      lastFailureAt\n    }\n  }\n": typeof types.AdminCredentialHealthDocument,
    "\n  subscription AdminUpstreamHealthLive {\n    upstreamHealthChanged {\n      upstreamId\n      credentialId\n      state\n      until\n      at\n    }\n  }\n": typeof types.AdminUpstreamHealthLiveDocument,
    "\n  query AlertSettingsPage {\n    alertSettings {\n      language\n      email\n      emailVerified\n      messengerLinked\n      messengerAvailable\n      balanceBelow { amountUsd channels }\n      spendTodayAbove { amountUsd channels }\n      keyCapShares { keyId percent channels }\n      invoicePaid { channels }\n      videoFinished { channels }\n    }\n    keys {\n      id\n      label\n      monthlySpendCap\n    }\n  }\n": typeof types.AlertSettingsPageDocument,
    "\n  mutation UpdateAlertSettings($input: AlertSettingsInput!) {\n    updateAlertSettings(input: $input) {\n      language\n    }\n  }\n": typeof types.UpdateAlertSettingsDocument,
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n": typeof types.LoginDocument,
    "\n  mutation Register($input: RegisterInput!) {\n    register(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n": typeof types.RegisterDocument,
    "\n  query Dashboard($dayStart: DateTimeISO!, $monthStart: DateTimeISO!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    me {\n      userId\n      balanceUsd\n    }\n    paymentConfig {\n      paidBalanceUsd\n      bonusBalanceUsd\n      nextBonusExpiry\n    }\n    today: usageSummary(from: $dayStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        inputTokens\n        outputTokens\n      }\n    }\n    month: usageSummary(from: $monthStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        officialCostUsd\n        savedUsd\n        savedPercent\n        inputTokens\n        outputTokens\n      }\n    }\n    usageTimeseries(from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        inputTokens\n        outputTokens\n        requests\n      }\n    }\n  }\n": typeof types.DashboardDocument,
    "\n  subscription DashboardBalance($organizationId: ID) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      availableUsd\n    }\n  }\n": typeof types.DashboardBalanceDocument,
    "\n  subscription DashboardUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        createdAt\n        amountUsd\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n": typeof types.DashboardUsageDocument,
    "\n  query InvitationPreview($token: String!) {\n    invitationPreview(token: $token) {\n      organizationName\n      email\n      role\n      expiresAt\n    }\n  }\n": typeof types.InvitationPreviewDocument,
    "\n  mutation AcceptInvitation($token: String!) {\n    acceptInvitation(token: $token) {\n      id\n      name\n    }\n  }\n": typeof types.AcceptInvitationDocument,
    "\n  query Keys {\n    keys {\n      id\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n      lastUsed\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n": typeof types.KeysDocument,
    "\n  mutation CreateKey($input: CreateKeyInput!) {\n    createKey(input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n": typeof types.CreateKeyDocument,
    "\n  subscription KeyEvents($organizationId: ID) {\n    keyEvents(organizationId: $organizationId) {\n      type\n      keyId\n      limit\n      refused\n      at\n    }\n  }\n": typeof types.KeyEventsDocument,
    "\n  mutation RevokeKey($id: ID!) {\n    revokeKey(id: $id)\n  }\n": typeof types.RevokeKeyDocument,
    "\n  query Leaderboard {\n    leaderboard(limit: 20) {\n      date\n      timezone\n      prize\n      totalTokens\n      totalSavedUsd\n      me {\n        rank\n        tokens\n      }\n      items {\n        rank\n        user\n        tokens\n        savedUsd\n        isMe\n      }\n    }\n  }\n": typeof types.LeaderboardDocument,
    "\n  fragment PriceFields on Pricing {\n    inputUsdPer1m\n    outputUsdPer1m\n    cacheReadUsdPer1m\n    cacheWriteUsdPer1m\n    usdPerGeneration\n    usdPerSecond\n  }\n": typeof types.PriceFieldsFragmentDoc,
    "\n  query Models {\n    catalogModels {\n      id\n      label\n      family\n      kind\n      endpoints\n      contextWindow\n      maxOutputTokens\n      video\n      capabilities {\n        streaming\n        tools\n        vision\n      }\n      official {\n        ...PriceFields\n      }\n      groups {\n        id\n        label\n        pricingPlan\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n": typeof types.ModelsDocument,
    "\n  query Announcements($language: String) {\n    announcements(language: $language) {\n      unreadCount\n      items {\n        id\n        title\n        body\n        publishedAt\n        read\n      }\n    }\n  }\n": typeof types.AnnouncementsDocument,
    "\n  mutation MarkAnnouncementRead($id: ID!) {\n    markAnnouncementRead(id: $id) {\n      id\n      read\n    }\n  }\n": typeof types.MarkAnnouncementReadDocument,
    "\n  mutation MarkAllAnnouncementsRead {\n    markAllAnnouncementsRead\n  }\n": typeof types.MarkAllAnnouncementsReadDocument,
    "\n  query OrganizationMembers($organizationId: ID!) {\n    organization(id: $organizationId) {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n      email\n      role\n      monthlySpendCap\n      monthSpent\n      joinedAt\n    }\n  }\n": typeof types.OrganizationMembersDocument,
    "\n  query OrganizationDashboard($organizationId: ID!, $withBalance: Boolean!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    organizationBalance(organizationId: $organizationId) @include(if: $withBalance) {\n      balanceUsd\n      paidUsd\n      bonusUsd\n    }\n    organizationUsageTimeseries(organizationId: $organizationId, from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        requests\n      }\n    }\n  }\n": typeof types.OrganizationDashboardDocument,
    "\n  query OrganizationInvitations($organizationId: ID!) {\n    organizationInvitations(organizationId: $organizationId) {\n      id\n      email\n      role\n      status\n      createdAt\n      expiresAt\n    }\n  }\n": typeof types.OrganizationInvitationsDocument,
    "\n  mutation RevokeInvitation($organizationId: ID!, $invitationId: ID!) {\n    revokeInvitation(organizationId: $organizationId, invitationId: $invitationId)\n  }\n": typeof types.RevokeInvitationDocument,
    "\n  query OrganizationKeys($organizationId: ID!) {\n    organizationKeys(organizationId: $organizationId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      createdAt\n      lastUsed\n      createdBy\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n": typeof types.OrganizationKeysDocument,
    "\n  mutation CreateOrganizationKey($organizationId: ID!, $input: CreateKeyInput!) {\n    createOrganizationKey(organizationId: $organizationId, input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n": typeof types.CreateOrganizationKeyDocument,
    "\n  mutation RevokeOrganizationKey($organizationId: ID!, $keyId: ID!) {\n    revokeOrganizationKey(organizationId: $organizationId, keyId: $keyId)\n  }\n": typeof types.RevokeOrganizationKeyDocument,
    "\n  subscription MembersUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n      }\n    }\n  }\n": typeof types.MembersUsageDocument,
    "\n  mutation UpdateOrganization($input: UpdateOrganizationInput!) {\n    updateOrganization(input: $input) {\n      id\n      name\n      monthlySpendCap\n    }\n  }\n": typeof types.UpdateOrganizationDocument,
    "\n  mutation InviteMember($input: InviteMemberInput!) {\n    inviteMember(input: $input) {\n      id\n      email\n      status\n    }\n  }\n": typeof types.InviteMemberDocument,
    "\n  mutation UpdateMember($input: UpdateMemberInput!) {\n    updateMember(input: $input) {\n      userId\n      role\n      monthlySpendCap\n    }\n  }\n": typeof types.UpdateMemberDocument,
    "\n  mutation RemoveMember($organizationId: ID!, $userId: ID!) {\n    removeMember(organizationId: $organizationId, userId: $userId)\n  }\n": typeof types.RemoveMemberDocument,
    "\n  mutation LeaveOrganization($organizationId: ID!) {\n    leaveOrganization(organizationId: $organizationId)\n  }\n": typeof types.LeaveOrganizationDocument,
    "\n  mutation TransferOwnership($organizationId: ID!, $userId: ID!) {\n    transferOwnership(organizationId: $organizationId, userId: $userId) {\n      id\n      role\n      ownerId\n    }\n  }\n": typeof types.TransferOwnershipDocument,
    "\n  mutation CreateOrganization($input: CreateOrganizationInput!) {\n    createOrganization(input: $input) {\n      id\n      name\n    }\n  }\n": typeof types.CreateOrganizationDocument,
    "\n  query OrganizationPayments($organizationId: ID!, $language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    organizationInvoices(organizationId: $organizationId, limit: 20) {\n      ...InvoiceFields\n    }\n    organizationBalance(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n    }\n  }\n": typeof types.OrganizationPaymentsDocument,
    "\n  mutation CreateOrganizationInvoice($organizationId: ID!, $amountUsd: String!, $method: String!) {\n    createOrganizationInvoice(organizationId: $organizationId, amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n": typeof types.CreateOrganizationInvoiceDocument,
    "\n  subscription OrganizationWallet($organizationId: ID!) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      transaction {\n        kind\n      }\n    }\n  }\n": typeof types.OrganizationWalletDocument,
    "\n  query OrganizationStatement($organizationId: ID!, $month: String!) {\n    organizationStatement(organizationId: $organizationId, month: $month) {\n      month\n      openingBalance\n      closingBalance\n      totalSpend\n      invoicesCredited\n      otherChanges\n      invoices {\n        id\n        amount\n        status\n        paidAt\n      }\n      byMember {\n        userId\n        name\n        spend\n        requests\n      }\n      byModel {\n        model\n        spend\n        requests\n      }\n      byKey {\n        apiKeyId\n        label\n        memberName\n        spend\n        requests\n      }\n    }\n  }\n": typeof types.OrganizationStatementDocument,
    "\n  query Payments($language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    invoices(limit: 20) {\n      ...InvoiceFields\n    }\n  }\n": typeof types.PaymentsDocument,
    "\n  fragment PaymentConfigFields on PaymentConfig {\n    paymentsEnabled\n    rubPerUsd\n    agreementAccepted\n    bonusEnabled\n    bonusExpiryDays\n    bonusTiers {\n      minUsd\n      rate\n    }\n    methods {\n      id\n      label\n      currency\n      minUsd\n      maxUsd\n      enabled\n    }\n    agreement {\n      title\n      intro\n      termsVersion\n      privacyVersion\n      sections {\n        title\n        text\n      }\n    }\n  }\n": typeof types.PaymentConfigFieldsFragmentDoc,
    "\n  fragment InvoiceFields on Invoice {\n    id\n    method\n    amountRequested\n    currency\n    usdCredit\n    bonusRate\n    bonusUsd\n    status\n    paymentUrl\n    createdAt\n    paidAt\n  }\n": typeof types.InvoiceFieldsFragmentDoc,
    "\n  mutation AcceptAgreement($language: String) {\n    acceptAgreement(language: $language, surface: \"cabinet\") {\n      accepted\n    }\n  }\n": typeof types.AcceptAgreementDocument,
    "\n  mutation CreateInvoice($amountUsd: String!, $method: String!) {\n    createInvoice(amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n": typeof types.CreateInvoiceDocument,
    "\n  subscription InvoiceUpdated {\n    invoiceUpdated {\n      ...InvoiceFields\n    }\n  }\n": typeof types.InvoiceUpdatedDocument,
    "\n  query IdentityLinks {\n    identityLinks {\n      email\n      emailVerified\n      hasPassword\n      linked\n      messengerLabel\n    }\n  }\n": typeof types.IdentityLinksDocument,
    "\n  mutation VerifyEmail($code: String!) {\n    verifyEmail(code: $code) {\n      userId\n      emailVerified\n    }\n  }\n": typeof types.VerifyEmailDocument,
    "\n  mutation ResendVerification($language: String) {\n    resendVerification(language: $language) {\n      ok\n    }\n  }\n": typeof types.ResendVerificationDocument,
    "\n  mutation StartEmailLink($email: String!, $language: String) {\n    startEmailLink(email: $email, language: $language) {\n      ok\n      expiresAt\n    }\n  }\n": typeof types.StartEmailLinkDocument,
    "\n  mutation ConfirmEmailLink($email: String!, $code: String!, $password: String!) {\n    confirmEmailLink(email: $email, code: $code, password: $password) {\n      ok\n      email\n    }\n  }\n": typeof types.ConfirmEmailLinkDocument,
    "\n  mutation StartMessengerLink {\n    startMessengerLink {\n      botUrl\n      expiresAt\n      token\n    }\n  }\n": typeof types.StartMessengerLinkDocument,
    "\n  mutation UnlinkMessenger {\n    unlinkMessenger\n  }\n": typeof types.UnlinkMessengerDocument,
    "\n  query ServiceStatus {\n    serviceStatus {\n      generatedAt\n      groups {\n        id\n        label\n        status\n        uptime {\n          last24h\n          last7d\n          last30d\n          allTime\n        }\n        models {\n          id\n          label\n          status\n          checkedAt\n          history {\n            observedAt\n            status\n          }\n        }\n      }\n    }\n  }\n": typeof types.ServiceStatusDocument,
    "\n  subscription ServiceStatusChanged {\n    serviceStatusChanged {\n      groupId\n      modelId\n      status\n      observedAt\n    }\n  }\n": typeof types.ServiceStatusChangedDocument,
    "\n  query UsageEvent($requestId: ID!) {\n    usageEvent(requestId: $requestId) {\n      ...UsageEventFields\n    }\n  }\n": typeof types.UsageEventDocument,
    "\n  query Usage($org: Boolean!, $organizationId: ID!, $memberId: ID, $from: DateTimeISO, $to: DateTimeISO, $model: String, $group: String, $status: String, $providerFamily: String, $limit: Int) {\n    usage(from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @skip(if: $org) {\n      id\n      routeGroup\n      ...UsageEventFields\n    }\n    organizationUsage(organizationId: $organizationId, memberId: $memberId, from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @include(if: $org) {\n      id\n      routeGroup\n      memberId\n      memberName\n      ...OrganizationUsageEventFields\n    }\n  }\n": typeof types.UsageDocument,
    "\n  fragment UsageEventFields on UsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n": typeof types.UsageEventFieldsFragmentDoc,
    "\n  fragment OrganizationUsageEventFields on OrganizationUsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n": typeof types.OrganizationUsageEventFieldsFragmentDoc,
    "\n  subscription UsageLive($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        routeGroup\n        ...UsageEventFields\n      }\n    }\n  }\n": typeof types.UsageLiveDocument,
    "\n  query UsageCatalog {\n    catalogModels {\n      id\n      label\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n": typeof types.UsageCatalogDocument,
    "\n  query VideoTasks {\n    videoTasks(limit: 20) {\n      ...VideoTaskFields\n    }\n  }\n": typeof types.VideoTasksDocument,
    "\n  fragment VideoTaskFields on VideoTask {\n    id\n    model\n    status\n    progress\n    seconds\n    createdAt\n    completedAt\n    playbackUrl\n    error {\n      code\n      message\n    }\n  }\n": typeof types.VideoTaskFieldsFragmentDoc,
    "\n  subscription VideoTaskUpdated {\n    videoTaskUpdated {\n      ...VideoTaskFields\n    }\n  }\n": typeof types.VideoTaskUpdatedDocument,
    "\n  query WebhookEndpoints($language: String) {\n    webhookEndpoints {\n      id\n      url\n      description\n      eventTypes\n      enabled\n      disabledReason\n      createdAt\n    }\n    webhookEventTypes(language: $language) {\n      type\n      description\n    }\n  }\n": typeof types.WebhookEndpointsDocument,
    "\n  query WebhookDeliveries($endpointId: ID!) {\n    webhookDeliveries(endpointId: $endpointId, limit: 20) {\n      id\n      messageId\n      eventType\n      status\n      attempts\n      lastStatusCode\n      lastError\n      lastDurationMs\n      lastAttemptAt\n      createdAt\n    }\n  }\n": typeof types.WebhookDeliveriesDocument,
    "\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      secret\n    }\n  }\n": typeof types.CreateWebhookEndpointDocument,
    "\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n": typeof types.UpdateWebhookEndpointDocument,
    "\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n": typeof types.DeleteWebhookEndpointDocument,
    "\n  mutation RotateWebhookSecret($id: ID!) {\n    rotateWebhookSecret(id: $id) {\n      id\n      secret\n    }\n  }\n": typeof types.RotateWebhookSecretDocument,
    "\n  mutation SendTestWebhook($endpointId: ID!) {\n    sendTestWebhook(endpointId: $endpointId)\n  }\n": typeof types.SendTestWebhookDocument,
    "\n  mutation ReplayWebhookDelivery($deliveryId: ID!) {\n    replayWebhookDelivery(deliveryId: $deliveryId) {\n      id\n    }\n  }\n": typeof types.ReplayWebhookDeliveryDocument,
    "\n  query Me {\n    me {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n    }\n  }\n": typeof types.MeDocument,
};
const documents: Documents = {
    "\n  mutation Logout {\n    logout\n  }\n": types.LogoutDocument,
    "\n  query Organizations {\n    organizations {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n      createdAt\n    }\n  }\n": types.OrganizationsDocument,
    "\n  query AdminAccounts($search: String) {\n    adminAccounts(search: $search, limit: 50) {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n      paidBalanceUsd\n      bonusBalanceUsd\n      creditLimitUsd\n      trustedPartnerUntil\n      concurrencyLimit\n      activeKeys\n      activeSessions\n      createdAt\n    }\n  }\n": types.AdminAccountsDocument,
    "\n  query AdminAccountKeys($userId: ID!) {\n    adminAccountKeys(userId: $userId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      rpmLimit\n      concurrencyLimit\n      revokedAt\n    }\n  }\n": types.AdminAccountKeysDocument,
    "\n  mutation AdjustBalance($input: AdjustBalanceInput!) {\n    adjustBalance(input: $input) {\n      transactionId\n      amountUsd\n      applied\n    }\n  }\n": types.AdjustBalanceDocument,
    "\n  mutation SetTrustedPartner($input: TrustedPartnerInput!) {\n    setTrustedPartner(input: $input) {\n      userId\n    }\n  }\n": types.SetTrustedPartnerDocument,
    "\n  mutation RevokeTrustedPartner($userId: ID!) {\n    revokeTrustedPartner(userId: $userId) {\n      userId\n    }\n  }\n": types.RevokeTrustedPartnerDocument,
    "\n  mutation EndSessions($userId: ID!) {\n    endSessions(userId: $userId)\n  }\n": types.EndSessionsDocument,
    "\n  mutation SetKeyLimits($input: KeyLimitsInput!) {\n    setKeyLimits(input: $input) {\n      keyId\n    }\n  }\n": types.SetKeyLimitsDocument,
    "\n  query AdminAnnouncements {\n    adminAnnouncements {\n      id\n      titleEn\n      titleRu\n      bodyEn\n      bodyRu\n      published\n      publishedAt\n      updatedAt\n    }\n  }\n": types.AdminAnnouncementsDocument,
    "\n  mutation CreateAnnouncement($input: CreateAnnouncementInput!) {\n    createAnnouncement(input: $input) {\n      id\n    }\n  }\n": types.CreateAnnouncementDocument,
    "\n  mutation PublishAnnouncement($id: ID!) {\n    publishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n": types.PublishAnnouncementDocument,
    "\n  mutation UnpublishAnnouncement($id: ID!) {\n    unpublishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n": types.UnpublishAnnouncementDocument,
    "\n  mutation SetModelPrices($modelId: ID!, $group: ID!, $prices: JSONObject!) {\n    setModelPrices(modelId: $modelId, group: $group, prices: $prices) {\n      id\n      groups {\n        id\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n": types.SetModelPricesDocument,
    "\n  mutation UpsertCatalogModel($model: JSONObject!) {\n    upsertCatalogModel(model: $model) {\n      id\n    }\n  }\n": types.UpsertCatalogModelDocument,
    "\n  query AdminInvoices($status: String) {\n    adminInvoices(status: $status, limit: 100) {\n      id\n      account\n      method\n      amountRequested\n      currency\n      usdCredit\n      bonusUsd\n      status\n      createdAt\n      paidAt\n    }\n  }\n": types.AdminInvoicesDocument,
    "\n  mutation MarkInvoicePaid($id: ID!, $reference: String) {\n    markInvoicePaid(id: $id, reference: $reference) {\n      id\n      status\n    }\n  }\n": types.MarkInvoicePaidDocument,
    "\n  fragment CabinetMarginRowFields on MarginRow {\n    key\n    requests\n    revenueUsd\n    upstreamCostUsd\n    marginUsd\n    uncostedRequests\n    uncostedRevenueUsd\n  }\n": types.CabinetMarginRowFieldsFragmentDoc,
    "\n  query AdminMarginReport($from: DateTimeISO!, $to: DateTimeISO!) {\n    adminMargin(from: $from, to: $to) {\n      from\n      to\n      totals {\n        ...CabinetMarginRowFields\n      }\n      byDay {\n        ...CabinetMarginRowFields\n      }\n      byModel {\n        ...CabinetMarginRowFields\n      }\n      byGroup {\n        ...CabinetMarginRowFields\n      }\n      byUpstream {\n        ...CabinetMarginRowFields\n      }\n    }\n  }\n": types.AdminMarginReportDocument,
    "\n  query AdminUpstreamInvoice($from: DateTimeISO!, $to: DateTimeISO!, $upstreamId: String) {\n    adminUpstreamUsage(from: $from, to: $to, upstreamId: $upstreamId) {\n      upstreamId\n      model\n      requests\n      inputTokens\n      cacheReadTokens\n      cacheWriteTokens\n      outputTokens\n      images\n      costUsd\n      uncostedRequests\n    }\n  }\n": types.AdminUpstreamInvoiceDocument,
    "\n  query AdminPricingPlans {\n    adminPricingPlans {\n      id\n      label\n      public\n      multiplier\n      overrides\n    }\n  }\n": types.AdminPricingPlansDocument,
    "\n  mutation AdminUpsertPricingPlan($input: PricingPlanInput!) {\n    upsertPricingPlan(input: $input) {\n      id\n    }\n  }\n": types.AdminUpsertPricingPlanDocument,
    "\n  fragment CabinetUpstreamFields on AdminUpstream {\n    id\n    kind\n    baseUrl\n    enabled\n    active\n    inactiveReason\n    maxConcurrent\n    nativeResponses\n    fallback\n    timeouts {\n      connectMs\n      firstByteMs\n      idleMs\n      keepAliveMs\n    }\n    health {\n      windowSeconds\n      minFailures\n      failureRate\n      cooldownSeconds\n    }\n    credentials {\n      id\n      routingId\n      label\n      source\n      last4\n      env\n      enabled\n      maxConcurrent\n      usable\n      problem\n    }\n    routes {\n      id\n      model\n      group\n      upstreamModel\n      weight\n      priority\n      enabled\n    }\n    prices {\n      model\n      inputPer1m\n      outputPer1m\n      cacheReadPer1m\n      cacheWritePer1m\n      perImage\n      perVideoSecond\n    }\n  }\n": types.CabinetUpstreamFieldsFragmentDoc,
    "\n  query AdminUpstreamList {\n    adminUpstreams {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminUpstreamListDocument,
    "\n  mutation AdminCreateUpstream($input: CreateUpstreamInput!) {\n    createUpstream(input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminCreateUpstreamDocument,
    "\n  mutation AdminUpdateUpstream($id: ID!, $input: UpdateUpstreamInput!) {\n    updateUpstream(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminUpdateUpstreamDocument,
    "\n  mutation AdminSetUpstreamEnabled($id: ID!, $enabled: Boolean!) {\n    setUpstreamEnabled(id: $id, enabled: $enabled) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminSetUpstreamEnabledDocument,
    "\n  mutation AdminDeleteUpstream($id: ID!) {\n    deleteUpstream(id: $id)\n  }\n": types.AdminDeleteUpstreamDocument,
    "\n  mutation AdminAddUpstreamCredential($upstreamId: ID!, $input: UpstreamCredentialInput!) {\n    addUpstreamCredential(upstreamId: $upstreamId, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminAddUpstreamCredentialDocument,
    "\n  mutation AdminUpdateUpstreamCredential($id: ID!, $input: UpstreamCredentialInput!) {\n    updateUpstreamCredential(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminUpdateUpstreamCredentialDocument,
    "\n  mutation AdminDeleteUpstreamCredential($id: ID!) {\n    deleteUpstreamCredential(id: $id) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminDeleteUpstreamCredentialDocument,
    "\n  mutation AdminSetUpstreamRoutes($upstreamId: ID!, $routes: [UpstreamRouteInput!]!) {\n    setUpstreamRoutes(upstreamId: $upstreamId, routes: $routes) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminSetUpstreamRoutesDocument,
    "\n  mutation AdminSetUpstreamPrices($upstreamId: ID!, $prices: [UpstreamPriceInput!]!) {\n    setUpstreamPrices(upstreamId: $upstreamId, prices: $prices) {\n      ...CabinetUpstreamFields\n    }\n  }\n": types.AdminSetUpstreamPricesDocument,
    "\n  mutation AdminTestUpstreamCredential($input: UpstreamTestInput!) {\n    testUpstreamCredential(input: $input) {\n      ok\n      status\n      latencyMs\n      outcome\n      model\n    }\n  }\n": types.AdminTestUpstreamCredentialDocument,
    "\n  query AdminCredentialHealth {\n    adminUpstreamHealth {\n      upstreamId\n      credentialId\n      label\n      state\n      until\n      inFlight\n      lastFailureAt\n    }\n  }\n": types.AdminCredentialHealthDocument,
    "\n  subscription AdminUpstreamHealthLive {\n    upstreamHealthChanged {\n      upstreamId\n      credentialId\n      state\n      until\n      at\n    }\n  }\n": types.AdminUpstreamHealthLiveDocument,
    "\n  query AlertSettingsPage {\n    alertSettings {\n      language\n      email\n      emailVerified\n      messengerLinked\n      messengerAvailable\n      balanceBelow { amountUsd channels }\n      spendTodayAbove { amountUsd channels }\n      keyCapShares { keyId percent channels }\n      invoicePaid { channels }\n      videoFinished { channels }\n    }\n    keys {\n      id\n      label\n      monthlySpendCap\n    }\n  }\n": types.AlertSettingsPageDocument,
    "\n  mutation UpdateAlertSettings($input: AlertSettingsInput!) {\n    updateAlertSettings(input: $input) {\n      language\n    }\n  }\n": types.UpdateAlertSettingsDocument,
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n": types.LoginDocument,
    "\n  mutation Register($input: RegisterInput!) {\n    register(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n": types.RegisterDocument,
    "\n  query Dashboard($dayStart: DateTimeISO!, $monthStart: DateTimeISO!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    me {\n      userId\n      balanceUsd\n    }\n    paymentConfig {\n      paidBalanceUsd\n      bonusBalanceUsd\n      nextBonusExpiry\n    }\n    today: usageSummary(from: $dayStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        inputTokens\n        outputTokens\n      }\n    }\n    month: usageSummary(from: $monthStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        officialCostUsd\n        savedUsd\n        savedPercent\n        inputTokens\n        outputTokens\n      }\n    }\n    usageTimeseries(from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        inputTokens\n        outputTokens\n        requests\n      }\n    }\n  }\n": types.DashboardDocument,
    "\n  subscription DashboardBalance($organizationId: ID) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      availableUsd\n    }\n  }\n": types.DashboardBalanceDocument,
    "\n  subscription DashboardUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        createdAt\n        amountUsd\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n": types.DashboardUsageDocument,
    "\n  query InvitationPreview($token: String!) {\n    invitationPreview(token: $token) {\n      organizationName\n      email\n      role\n      expiresAt\n    }\n  }\n": types.InvitationPreviewDocument,
    "\n  mutation AcceptInvitation($token: String!) {\n    acceptInvitation(token: $token) {\n      id\n      name\n    }\n  }\n": types.AcceptInvitationDocument,
    "\n  query Keys {\n    keys {\n      id\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n      lastUsed\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n": types.KeysDocument,
    "\n  mutation CreateKey($input: CreateKeyInput!) {\n    createKey(input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n": types.CreateKeyDocument,
    "\n  subscription KeyEvents($organizationId: ID) {\n    keyEvents(organizationId: $organizationId) {\n      type\n      keyId\n      limit\n      refused\n      at\n    }\n  }\n": types.KeyEventsDocument,
    "\n  mutation RevokeKey($id: ID!) {\n    revokeKey(id: $id)\n  }\n": types.RevokeKeyDocument,
    "\n  query Leaderboard {\n    leaderboard(limit: 20) {\n      date\n      timezone\n      prize\n      totalTokens\n      totalSavedUsd\n      me {\n        rank\n        tokens\n      }\n      items {\n        rank\n        user\n        tokens\n        savedUsd\n        isMe\n      }\n    }\n  }\n": types.LeaderboardDocument,
    "\n  fragment PriceFields on Pricing {\n    inputUsdPer1m\n    outputUsdPer1m\n    cacheReadUsdPer1m\n    cacheWriteUsdPer1m\n    usdPerGeneration\n    usdPerSecond\n  }\n": types.PriceFieldsFragmentDoc,
    "\n  query Models {\n    catalogModels {\n      id\n      label\n      family\n      kind\n      endpoints\n      contextWindow\n      maxOutputTokens\n      video\n      capabilities {\n        streaming\n        tools\n        vision\n      }\n      official {\n        ...PriceFields\n      }\n      groups {\n        id\n        label\n        pricingPlan\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n": types.ModelsDocument,
    "\n  query Announcements($language: String) {\n    announcements(language: $language) {\n      unreadCount\n      items {\n        id\n        title\n        body\n        publishedAt\n        read\n      }\n    }\n  }\n": types.AnnouncementsDocument,
    "\n  mutation MarkAnnouncementRead($id: ID!) {\n    markAnnouncementRead(id: $id) {\n      id\n      read\n    }\n  }\n": types.MarkAnnouncementReadDocument,
    "\n  mutation MarkAllAnnouncementsRead {\n    markAllAnnouncementsRead\n  }\n": types.MarkAllAnnouncementsReadDocument,
    "\n  query OrganizationMembers($organizationId: ID!) {\n    organization(id: $organizationId) {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n      email\n      role\n      monthlySpendCap\n      monthSpent\n      joinedAt\n    }\n  }\n": types.OrganizationMembersDocument,
    "\n  query OrganizationDashboard($organizationId: ID!, $withBalance: Boolean!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    organizationBalance(organizationId: $organizationId) @include(if: $withBalance) {\n      balanceUsd\n      paidUsd\n      bonusUsd\n    }\n    organizationUsageTimeseries(organizationId: $organizationId, from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        requests\n      }\n    }\n  }\n": types.OrganizationDashboardDocument,
    "\n  query OrganizationInvitations($organizationId: ID!) {\n    organizationInvitations(organizationId: $organizationId) {\n      id\n      email\n      role\n      status\n      createdAt\n      expiresAt\n    }\n  }\n": types.OrganizationInvitationsDocument,
    "\n  mutation RevokeInvitation($organizationId: ID!, $invitationId: ID!) {\n    revokeInvitation(organizationId: $organizationId, invitationId: $invitationId)\n  }\n": types.RevokeInvitationDocument,
    "\n  query OrganizationKeys($organizationId: ID!) {\n    organizationKeys(organizationId: $organizationId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      createdAt\n      lastUsed\n      createdBy\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n": types.OrganizationKeysDocument,
    "\n  mutation CreateOrganizationKey($organizationId: ID!, $input: CreateKeyInput!) {\n    createOrganizationKey(organizationId: $organizationId, input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n": types.CreateOrganizationKeyDocument,
    "\n  mutation RevokeOrganizationKey($organizationId: ID!, $keyId: ID!) {\n    revokeOrganizationKey(organizationId: $organizationId, keyId: $keyId)\n  }\n": types.RevokeOrganizationKeyDocument,
    "\n  subscription MembersUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n      }\n    }\n  }\n": types.MembersUsageDocument,
    "\n  mutation UpdateOrganization($input: UpdateOrganizationInput!) {\n    updateOrganization(input: $input) {\n      id\n      name\n      monthlySpendCap\n    }\n  }\n": types.UpdateOrganizationDocument,
    "\n  mutation InviteMember($input: InviteMemberInput!) {\n    inviteMember(input: $input) {\n      id\n      email\n      status\n    }\n  }\n": types.InviteMemberDocument,
    "\n  mutation UpdateMember($input: UpdateMemberInput!) {\n    updateMember(input: $input) {\n      userId\n      role\n      monthlySpendCap\n    }\n  }\n": types.UpdateMemberDocument,
    "\n  mutation RemoveMember($organizationId: ID!, $userId: ID!) {\n    removeMember(organizationId: $organizationId, userId: $userId)\n  }\n": types.RemoveMemberDocument,
    "\n  mutation LeaveOrganization($organizationId: ID!) {\n    leaveOrganization(organizationId: $organizationId)\n  }\n": types.LeaveOrganizationDocument,
    "\n  mutation TransferOwnership($organizationId: ID!, $userId: ID!) {\n    transferOwnership(organizationId: $organizationId, userId: $userId) {\n      id\n      role\n      ownerId\n    }\n  }\n": types.TransferOwnershipDocument,
    "\n  mutation CreateOrganization($input: CreateOrganizationInput!) {\n    createOrganization(input: $input) {\n      id\n      name\n    }\n  }\n": types.CreateOrganizationDocument,
    "\n  query OrganizationPayments($organizationId: ID!, $language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    organizationInvoices(organizationId: $organizationId, limit: 20) {\n      ...InvoiceFields\n    }\n    organizationBalance(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n    }\n  }\n": types.OrganizationPaymentsDocument,
    "\n  mutation CreateOrganizationInvoice($organizationId: ID!, $amountUsd: String!, $method: String!) {\n    createOrganizationInvoice(organizationId: $organizationId, amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n": types.CreateOrganizationInvoiceDocument,
    "\n  subscription OrganizationWallet($organizationId: ID!) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      transaction {\n        kind\n      }\n    }\n  }\n": types.OrganizationWalletDocument,
    "\n  query OrganizationStatement($organizationId: ID!, $month: String!) {\n    organizationStatement(organizationId: $organizationId, month: $month) {\n      month\n      openingBalance\n      closingBalance\n      totalSpend\n      invoicesCredited\n      otherChanges\n      invoices {\n        id\n        amount\n        status\n        paidAt\n      }\n      byMember {\n        userId\n        name\n        spend\n        requests\n      }\n      byModel {\n        model\n        spend\n        requests\n      }\n      byKey {\n        apiKeyId\n        label\n        memberName\n        spend\n        requests\n      }\n    }\n  }\n": types.OrganizationStatementDocument,
    "\n  query Payments($language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    invoices(limit: 20) {\n      ...InvoiceFields\n    }\n  }\n": types.PaymentsDocument,
    "\n  fragment PaymentConfigFields on PaymentConfig {\n    paymentsEnabled\n    rubPerUsd\n    agreementAccepted\n    bonusEnabled\n    bonusExpiryDays\n    bonusTiers {\n      minUsd\n      rate\n    }\n    methods {\n      id\n      label\n      currency\n      minUsd\n      maxUsd\n      enabled\n    }\n    agreement {\n      title\n      intro\n      termsVersion\n      privacyVersion\n      sections {\n        title\n        text\n      }\n    }\n  }\n": types.PaymentConfigFieldsFragmentDoc,
    "\n  fragment InvoiceFields on Invoice {\n    id\n    method\n    amountRequested\n    currency\n    usdCredit\n    bonusRate\n    bonusUsd\n    status\n    paymentUrl\n    createdAt\n    paidAt\n  }\n": types.InvoiceFieldsFragmentDoc,
    "\n  mutation AcceptAgreement($language: String) {\n    acceptAgreement(language: $language, surface: \"cabinet\") {\n      accepted\n    }\n  }\n": types.AcceptAgreementDocument,
    "\n  mutation CreateInvoice($amountUsd: String!, $method: String!) {\n    createInvoice(amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n": types.CreateInvoiceDocument,
    "\n  subscription InvoiceUpdated {\n    invoiceUpdated {\n      ...InvoiceFields\n    }\n  }\n": types.InvoiceUpdatedDocument,
    "\n  query IdentityLinks {\n    identityLinks {\n      email\n      emailVerified\n      hasPassword\n      linked\n      messengerLabel\n    }\n  }\n": types.IdentityLinksDocument,
    "\n  mutation VerifyEmail($code: String!) {\n    verifyEmail(code: $code) {\n      userId\n      emailVerified\n    }\n  }\n": types.VerifyEmailDocument,
    "\n  mutation ResendVerification($language: String) {\n    resendVerification(language: $language) {\n      ok\n    }\n  }\n": types.ResendVerificationDocument,
    "\n  mutation StartEmailLink($email: String!, $language: String) {\n    startEmailLink(email: $email, language: $language) {\n      ok\n      expiresAt\n    }\n  }\n": types.StartEmailLinkDocument,
    "\n  mutation ConfirmEmailLink($email: String!, $code: String!, $password: String!) {\n    confirmEmailLink(email: $email, code: $code, password: $password) {\n      ok\n      email\n    }\n  }\n": types.ConfirmEmailLinkDocument,
    "\n  mutation StartMessengerLink {\n    startMessengerLink {\n      botUrl\n      expiresAt\n      token\n    }\n  }\n": types.StartMessengerLinkDocument,
    "\n  mutation UnlinkMessenger {\n    unlinkMessenger\n  }\n": types.UnlinkMessengerDocument,
    "\n  query ServiceStatus {\n    serviceStatus {\n      generatedAt\n      groups {\n        id\n        label\n        status\n        uptime {\n          last24h\n          last7d\n          last30d\n          allTime\n        }\n        models {\n          id\n          label\n          status\n          checkedAt\n          history {\n            observedAt\n            status\n          }\n        }\n      }\n    }\n  }\n": types.ServiceStatusDocument,
    "\n  subscription ServiceStatusChanged {\n    serviceStatusChanged {\n      groupId\n      modelId\n      status\n      observedAt\n    }\n  }\n": types.ServiceStatusChangedDocument,
    "\n  query UsageEvent($requestId: ID!) {\n    usageEvent(requestId: $requestId) {\n      ...UsageEventFields\n    }\n  }\n": types.UsageEventDocument,
    "\n  query Usage($org: Boolean!, $organizationId: ID!, $memberId: ID, $from: DateTimeISO, $to: DateTimeISO, $model: String, $group: String, $status: String, $providerFamily: String, $limit: Int) {\n    usage(from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @skip(if: $org) {\n      id\n      routeGroup\n      ...UsageEventFields\n    }\n    organizationUsage(organizationId: $organizationId, memberId: $memberId, from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @include(if: $org) {\n      id\n      routeGroup\n      memberId\n      memberName\n      ...OrganizationUsageEventFields\n    }\n  }\n": types.UsageDocument,
    "\n  fragment UsageEventFields on UsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n": types.UsageEventFieldsFragmentDoc,
    "\n  fragment OrganizationUsageEventFields on OrganizationUsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n": types.OrganizationUsageEventFieldsFragmentDoc,
    "\n  subscription UsageLive($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        routeGroup\n        ...UsageEventFields\n      }\n    }\n  }\n": types.UsageLiveDocument,
    "\n  query UsageCatalog {\n    catalogModels {\n      id\n      label\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n": types.UsageCatalogDocument,
    "\n  query VideoTasks {\n    videoTasks(limit: 20) {\n      ...VideoTaskFields\n    }\n  }\n": types.VideoTasksDocument,
    "\n  fragment VideoTaskFields on VideoTask {\n    id\n    model\n    status\n    progress\n    seconds\n    createdAt\n    completedAt\n    playbackUrl\n    error {\n      code\n      message\n    }\n  }\n": types.VideoTaskFieldsFragmentDoc,
    "\n  subscription VideoTaskUpdated {\n    videoTaskUpdated {\n      ...VideoTaskFields\n    }\n  }\n": types.VideoTaskUpdatedDocument,
    "\n  query WebhookEndpoints($language: String) {\n    webhookEndpoints {\n      id\n      url\n      description\n      eventTypes\n      enabled\n      disabledReason\n      createdAt\n    }\n    webhookEventTypes(language: $language) {\n      type\n      description\n    }\n  }\n": types.WebhookEndpointsDocument,
    "\n  query WebhookDeliveries($endpointId: ID!) {\n    webhookDeliveries(endpointId: $endpointId, limit: 20) {\n      id\n      messageId\n      eventType\n      status\n      attempts\n      lastStatusCode\n      lastError\n      lastDurationMs\n      lastAttemptAt\n      createdAt\n    }\n  }\n": types.WebhookDeliveriesDocument,
    "\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      secret\n    }\n  }\n": types.CreateWebhookEndpointDocument,
    "\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n": types.UpdateWebhookEndpointDocument,
    "\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n": types.DeleteWebhookEndpointDocument,
    "\n  mutation RotateWebhookSecret($id: ID!) {\n    rotateWebhookSecret(id: $id) {\n      id\n      secret\n    }\n  }\n": types.RotateWebhookSecretDocument,
    "\n  mutation SendTestWebhook($endpointId: ID!) {\n    sendTestWebhook(endpointId: $endpointId)\n  }\n": types.SendTestWebhookDocument,
    "\n  mutation ReplayWebhookDelivery($deliveryId: ID!) {\n    replayWebhookDelivery(deliveryId: $deliveryId) {\n      id\n    }\n  }\n": types.ReplayWebhookDeliveryDocument,
    "\n  query Me {\n    me {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n    }\n  }\n": types.MeDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Logout {\n    logout\n  }\n"): (typeof documents)["\n  mutation Logout {\n    logout\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Organizations {\n    organizations {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  query Organizations {\n    organizations {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminAccounts($search: String) {\n    adminAccounts(search: $search, limit: 50) {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n      paidBalanceUsd\n      bonusBalanceUsd\n      creditLimitUsd\n      trustedPartnerUntil\n      concurrencyLimit\n      activeKeys\n      activeSessions\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  query AdminAccounts($search: String) {\n    adminAccounts(search: $search, limit: 50) {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n      paidBalanceUsd\n      bonusBalanceUsd\n      creditLimitUsd\n      trustedPartnerUntil\n      concurrencyLimit\n      activeKeys\n      activeSessions\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminAccountKeys($userId: ID!) {\n    adminAccountKeys(userId: $userId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      rpmLimit\n      concurrencyLimit\n      revokedAt\n    }\n  }\n"): (typeof documents)["\n  query AdminAccountKeys($userId: ID!) {\n    adminAccountKeys(userId: $userId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      rpmLimit\n      concurrencyLimit\n      revokedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdjustBalance($input: AdjustBalanceInput!) {\n    adjustBalance(input: $input) {\n      transactionId\n      amountUsd\n      applied\n    }\n  }\n"): (typeof documents)["\n  mutation AdjustBalance($input: AdjustBalanceInput!) {\n    adjustBalance(input: $input) {\n      transactionId\n      amountUsd\n      applied\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetTrustedPartner($input: TrustedPartnerInput!) {\n    setTrustedPartner(input: $input) {\n      userId\n    }\n  }\n"): (typeof documents)["\n  mutation SetTrustedPartner($input: TrustedPartnerInput!) {\n    setTrustedPartner(input: $input) {\n      userId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeTrustedPartner($userId: ID!) {\n    revokeTrustedPartner(userId: $userId) {\n      userId\n    }\n  }\n"): (typeof documents)["\n  mutation RevokeTrustedPartner($userId: ID!) {\n    revokeTrustedPartner(userId: $userId) {\n      userId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EndSessions($userId: ID!) {\n    endSessions(userId: $userId)\n  }\n"): (typeof documents)["\n  mutation EndSessions($userId: ID!) {\n    endSessions(userId: $userId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetKeyLimits($input: KeyLimitsInput!) {\n    setKeyLimits(input: $input) {\n      keyId\n    }\n  }\n"): (typeof documents)["\n  mutation SetKeyLimits($input: KeyLimitsInput!) {\n    setKeyLimits(input: $input) {\n      keyId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminAnnouncements {\n    adminAnnouncements {\n      id\n      titleEn\n      titleRu\n      bodyEn\n      bodyRu\n      published\n      publishedAt\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  query AdminAnnouncements {\n    adminAnnouncements {\n      id\n      titleEn\n      titleRu\n      bodyEn\n      bodyRu\n      published\n      publishedAt\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateAnnouncement($input: CreateAnnouncementInput!) {\n    createAnnouncement(input: $input) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation CreateAnnouncement($input: CreateAnnouncementInput!) {\n    createAnnouncement(input: $input) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PublishAnnouncement($id: ID!) {\n    publishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n"): (typeof documents)["\n  mutation PublishAnnouncement($id: ID!) {\n    publishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UnpublishAnnouncement($id: ID!) {\n    unpublishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n"): (typeof documents)["\n  mutation UnpublishAnnouncement($id: ID!) {\n    unpublishAnnouncement(id: $id) {\n      id\n      published\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetModelPrices($modelId: ID!, $group: ID!, $prices: JSONObject!) {\n    setModelPrices(modelId: $modelId, group: $group, prices: $prices) {\n      id\n      groups {\n        id\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation SetModelPrices($modelId: ID!, $group: ID!, $prices: JSONObject!) {\n    setModelPrices(modelId: $modelId, group: $group, prices: $prices) {\n      id\n      groups {\n        id\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpsertCatalogModel($model: JSONObject!) {\n    upsertCatalogModel(model: $model) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation UpsertCatalogModel($model: JSONObject!) {\n    upsertCatalogModel(model: $model) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminInvoices($status: String) {\n    adminInvoices(status: $status, limit: 100) {\n      id\n      account\n      method\n      amountRequested\n      currency\n      usdCredit\n      bonusUsd\n      status\n      createdAt\n      paidAt\n    }\n  }\n"): (typeof documents)["\n  query AdminInvoices($status: String) {\n    adminInvoices(status: $status, limit: 100) {\n      id\n      account\n      method\n      amountRequested\n      currency\n      usdCredit\n      bonusUsd\n      status\n      createdAt\n      paidAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkInvoicePaid($id: ID!, $reference: String) {\n    markInvoicePaid(id: $id, reference: $reference) {\n      id\n      status\n    }\n  }\n"): (typeof documents)["\n  mutation MarkInvoicePaid($id: ID!, $reference: String) {\n    markInvoicePaid(id: $id, reference: $reference) {\n      id\n      status\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment CabinetMarginRowFields on MarginRow {\n    key\n    requests\n    revenueUsd\n    upstreamCostUsd\n    marginUsd\n    uncostedRequests\n    uncostedRevenueUsd\n  }\n"): (typeof documents)["\n  fragment CabinetMarginRowFields on MarginRow {\n    key\n    requests\n    revenueUsd\n    upstreamCostUsd\n    marginUsd\n    uncostedRequests\n    uncostedRevenueUsd\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminMarginReport($from: DateTimeISO!, $to: DateTimeISO!) {\n    adminMargin(from: $from, to: $to) {\n      from\n      to\n      totals {\n        ...CabinetMarginRowFields\n      }\n      byDay {\n        ...CabinetMarginRowFields\n      }\n      byModel {\n        ...CabinetMarginRowFields\n      }\n      byGroup {\n        ...CabinetMarginRowFields\n      }\n      byUpstream {\n        ...CabinetMarginRowFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query AdminMarginReport($from: DateTimeISO!, $to: DateTimeISO!) {\n    adminMargin(from: $from, to: $to) {\n      from\n      to\n      totals {\n        ...CabinetMarginRowFields\n      }\n      byDay {\n        ...CabinetMarginRowFields\n      }\n      byModel {\n        ...CabinetMarginRowFields\n      }\n      byGroup {\n        ...CabinetMarginRowFields\n      }\n      byUpstream {\n        ...CabinetMarginRowFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminUpstreamInvoice($from: DateTimeISO!, $to: DateTimeISO!, $upstreamId: String) {\n    adminUpstreamUsage(from: $from, to: $to, upstreamId: $upstreamId) {\n      upstreamId\n      model\n      requests\n      inputTokens\n      cacheReadTokens\n      cacheWriteTokens\n      outputTokens\n      images\n      costUsd\n      uncostedRequests\n    }\n  }\n"): (typeof documents)["\n  query AdminUpstreamInvoice($from: DateTimeISO!, $to: DateTimeISO!, $upstreamId: String) {\n    adminUpstreamUsage(from: $from, to: $to, upstreamId: $upstreamId) {\n      upstreamId\n      model\n      requests\n      inputTokens\n      cacheReadTokens\n      cacheWriteTokens\n      outputTokens\n      images\n      costUsd\n      uncostedRequests\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminPricingPlans {\n    adminPricingPlans {\n      id\n      label\n      public\n      multiplier\n      overrides\n    }\n  }\n"): (typeof documents)["\n  query AdminPricingPlans {\n    adminPricingPlans {\n      id\n      label\n      public\n      multiplier\n      overrides\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminUpsertPricingPlan($input: PricingPlanInput!) {\n    upsertPricingPlan(input: $input) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation AdminUpsertPricingPlan($input: PricingPlanInput!) {\n    upsertPricingPlan(input: $input) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment CabinetUpstreamFields on AdminUpstream {\n    id\n    kind\n    baseUrl\n    enabled\n    active\n    inactiveReason\n    maxConcurrent\n    nativeResponses\n    fallback\n    timeouts {\n      connectMs\n      firstByteMs\n      idleMs\n      keepAliveMs\n    }\n    health {\n      windowSeconds\n      minFailures\n      failureRate\n      cooldownSeconds\n    }\n    credentials {\n      id\n      routingId\n      label\n      source\n      last4\n      env\n      enabled\n      maxConcurrent\n      usable\n      problem\n    }\n    routes {\n      id\n      model\n      group\n      upstreamModel\n      weight\n      priority\n      enabled\n    }\n    prices {\n      model\n      inputPer1m\n      outputPer1m\n      cacheReadPer1m\n      cacheWritePer1m\n      perImage\n      perVideoSecond\n    }\n  }\n"): (typeof documents)["\n  fragment CabinetUpstreamFields on AdminUpstream {\n    id\n    kind\n    baseUrl\n    enabled\n    active\n    inactiveReason\n    maxConcurrent\n    nativeResponses\n    fallback\n    timeouts {\n      connectMs\n      firstByteMs\n      idleMs\n      keepAliveMs\n    }\n    health {\n      windowSeconds\n      minFailures\n      failureRate\n      cooldownSeconds\n    }\n    credentials {\n      id\n      routingId\n      label\n      source\n      last4\n      env\n      enabled\n      maxConcurrent\n      usable\n      problem\n    }\n    routes {\n      id\n      model\n      group\n      upstreamModel\n      weight\n      priority\n      enabled\n    }\n    prices {\n      model\n      inputPer1m\n      outputPer1m\n      cacheReadPer1m\n      cacheWritePer1m\n      perImage\n      perVideoSecond\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminUpstreamList {\n    adminUpstreams {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  query AdminUpstreamList {\n    adminUpstreams {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminCreateUpstream($input: CreateUpstreamInput!) {\n    createUpstream(input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminCreateUpstream($input: CreateUpstreamInput!) {\n    createUpstream(input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminUpdateUpstream($id: ID!, $input: UpdateUpstreamInput!) {\n    updateUpstream(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminUpdateUpstream($id: ID!, $input: UpdateUpstreamInput!) {\n    updateUpstream(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminSetUpstreamEnabled($id: ID!, $enabled: Boolean!) {\n    setUpstreamEnabled(id: $id, enabled: $enabled) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminSetUpstreamEnabled($id: ID!, $enabled: Boolean!) {\n    setUpstreamEnabled(id: $id, enabled: $enabled) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminDeleteUpstream($id: ID!) {\n    deleteUpstream(id: $id)\n  }\n"): (typeof documents)["\n  mutation AdminDeleteUpstream($id: ID!) {\n    deleteUpstream(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminAddUpstreamCredential($upstreamId: ID!, $input: UpstreamCredentialInput!) {\n    addUpstreamCredential(upstreamId: $upstreamId, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminAddUpstreamCredential($upstreamId: ID!, $input: UpstreamCredentialInput!) {\n    addUpstreamCredential(upstreamId: $upstreamId, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminUpdateUpstreamCredential($id: ID!, $input: UpstreamCredentialInput!) {\n    updateUpstreamCredential(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminUpdateUpstreamCredential($id: ID!, $input: UpstreamCredentialInput!) {\n    updateUpstreamCredential(id: $id, input: $input) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminDeleteUpstreamCredential($id: ID!) {\n    deleteUpstreamCredential(id: $id) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminDeleteUpstreamCredential($id: ID!) {\n    deleteUpstreamCredential(id: $id) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminSetUpstreamRoutes($upstreamId: ID!, $routes: [UpstreamRouteInput!]!) {\n    setUpstreamRoutes(upstreamId: $upstreamId, routes: $routes) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminSetUpstreamRoutes($upstreamId: ID!, $routes: [UpstreamRouteInput!]!) {\n    setUpstreamRoutes(upstreamId: $upstreamId, routes: $routes) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminSetUpstreamPrices($upstreamId: ID!, $prices: [UpstreamPriceInput!]!) {\n    setUpstreamPrices(upstreamId: $upstreamId, prices: $prices) {\n      ...CabinetUpstreamFields\n    }\n  }\n"): (typeof documents)["\n  mutation AdminSetUpstreamPrices($upstreamId: ID!, $prices: [UpstreamPriceInput!]!) {\n    setUpstreamPrices(upstreamId: $upstreamId, prices: $prices) {\n      ...CabinetUpstreamFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AdminTestUpstreamCredential($input: UpstreamTestInput!) {\n    testUpstreamCredential(input: $input) {\n      ok\n      status\n      latencyMs\n      outcome\n      model\n    }\n  }\n"): (typeof documents)["\n  mutation AdminTestUpstreamCredential($input: UpstreamTestInput!) {\n    testUpstreamCredential(input: $input) {\n      ok\n      status\n      latencyMs\n      outcome\n      model\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminCredentialHealth {\n    adminUpstreamHealth {\n      upstreamId\n      credentialId\n      label\n      state\n      until\n      inFlight\n      lastFailureAt\n    }\n  }\n"): (typeof documents)["\n  query AdminCredentialHealth {\n    adminUpstreamHealth {\n      upstreamId\n      credentialId\n      label\n      state\n      until\n      inFlight\n      lastFailureAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription AdminUpstreamHealthLive {\n    upstreamHealthChanged {\n      upstreamId\n      credentialId\n      state\n      until\n      at\n    }\n  }\n"): (typeof documents)["\n  subscription AdminUpstreamHealthLive {\n    upstreamHealthChanged {\n      upstreamId\n      credentialId\n      state\n      until\n      at\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AlertSettingsPage {\n    alertSettings {\n      language\n      email\n      emailVerified\n      messengerLinked\n      messengerAvailable\n      balanceBelow { amountUsd channels }\n      spendTodayAbove { amountUsd channels }\n      keyCapShares { keyId percent channels }\n      invoicePaid { channels }\n      videoFinished { channels }\n    }\n    keys {\n      id\n      label\n      monthlySpendCap\n    }\n  }\n"): (typeof documents)["\n  query AlertSettingsPage {\n    alertSettings {\n      language\n      email\n      emailVerified\n      messengerLinked\n      messengerAvailable\n      balanceBelow { amountUsd channels }\n      spendTodayAbove { amountUsd channels }\n      keyCapShares { keyId percent channels }\n      invoicePaid { channels }\n      videoFinished { channels }\n    }\n    keys {\n      id\n      label\n      monthlySpendCap\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateAlertSettings($input: AlertSettingsInput!) {\n    updateAlertSettings(input: $input) {\n      language\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateAlertSettings($input: AlertSettingsInput!) {\n    updateAlertSettings(input: $input) {\n      language\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Register($input: RegisterInput!) {\n    register(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation Register($input: RegisterInput!) {\n    register(input: $input) {\n      account {\n        userId\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Dashboard($dayStart: DateTimeISO!, $monthStart: DateTimeISO!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    me {\n      userId\n      balanceUsd\n    }\n    paymentConfig {\n      paidBalanceUsd\n      bonusBalanceUsd\n      nextBonusExpiry\n    }\n    today: usageSummary(from: $dayStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        inputTokens\n        outputTokens\n      }\n    }\n    month: usageSummary(from: $monthStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        officialCostUsd\n        savedUsd\n        savedPercent\n        inputTokens\n        outputTokens\n      }\n    }\n    usageTimeseries(from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        inputTokens\n        outputTokens\n        requests\n      }\n    }\n  }\n"): (typeof documents)["\n  query Dashboard($dayStart: DateTimeISO!, $monthStart: DateTimeISO!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    me {\n      userId\n      balanceUsd\n    }\n    paymentConfig {\n      paidBalanceUsd\n      bonusBalanceUsd\n      nextBonusExpiry\n    }\n    today: usageSummary(from: $dayStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        inputTokens\n        outputTokens\n      }\n    }\n    month: usageSummary(from: $monthStart, to: $now) {\n      totals {\n        requests\n        spendUsd\n        officialCostUsd\n        savedUsd\n        savedPercent\n        inputTokens\n        outputTokens\n      }\n    }\n    usageTimeseries(from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        inputTokens\n        outputTokens\n        requests\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription DashboardBalance($organizationId: ID) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      availableUsd\n    }\n  }\n"): (typeof documents)["\n  subscription DashboardBalance($organizationId: ID) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      availableUsd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription DashboardUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        createdAt\n        amountUsd\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription DashboardUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        createdAt\n        amountUsd\n        promptTokens\n        completionTokens\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InvitationPreview($token: String!) {\n    invitationPreview(token: $token) {\n      organizationName\n      email\n      role\n      expiresAt\n    }\n  }\n"): (typeof documents)["\n  query InvitationPreview($token: String!) {\n    invitationPreview(token: $token) {\n      organizationName\n      email\n      role\n      expiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AcceptInvitation($token: String!) {\n    acceptInvitation(token: $token) {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  mutation AcceptInvitation($token: String!) {\n    acceptInvitation(token: $token) {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Keys {\n    keys {\n      id\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n      lastUsed\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n"): (typeof documents)["\n  query Keys {\n    keys {\n      id\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n      lastUsed\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateKey($input: CreateKeyInput!) {\n    createKey(input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  mutation CreateKey($input: CreateKeyInput!) {\n    createKey(input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription KeyEvents($organizationId: ID) {\n    keyEvents(organizationId: $organizationId) {\n      type\n      keyId\n      limit\n      refused\n      at\n    }\n  }\n"): (typeof documents)["\n  subscription KeyEvents($organizationId: ID) {\n    keyEvents(organizationId: $organizationId) {\n      type\n      keyId\n      limit\n      refused\n      at\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeKey($id: ID!) {\n    revokeKey(id: $id)\n  }\n"): (typeof documents)["\n  mutation RevokeKey($id: ID!) {\n    revokeKey(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Leaderboard {\n    leaderboard(limit: 20) {\n      date\n      timezone\n      prize\n      totalTokens\n      totalSavedUsd\n      me {\n        rank\n        tokens\n      }\n      items {\n        rank\n        user\n        tokens\n        savedUsd\n        isMe\n      }\n    }\n  }\n"): (typeof documents)["\n  query Leaderboard {\n    leaderboard(limit: 20) {\n      date\n      timezone\n      prize\n      totalTokens\n      totalSavedUsd\n      me {\n        rank\n        tokens\n      }\n      items {\n        rank\n        user\n        tokens\n        savedUsd\n        isMe\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PriceFields on Pricing {\n    inputUsdPer1m\n    outputUsdPer1m\n    cacheReadUsdPer1m\n    cacheWriteUsdPer1m\n    usdPerGeneration\n    usdPerSecond\n  }\n"): (typeof documents)["\n  fragment PriceFields on Pricing {\n    inputUsdPer1m\n    outputUsdPer1m\n    cacheReadUsdPer1m\n    cacheWriteUsdPer1m\n    usdPerGeneration\n    usdPerSecond\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Models {\n    catalogModels {\n      id\n      label\n      family\n      kind\n      endpoints\n      contextWindow\n      maxOutputTokens\n      video\n      capabilities {\n        streaming\n        tools\n        vision\n      }\n      official {\n        ...PriceFields\n      }\n      groups {\n        id\n        label\n        pricingPlan\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Models {\n    catalogModels {\n      id\n      label\n      family\n      kind\n      endpoints\n      contextWindow\n      maxOutputTokens\n      video\n      capabilities {\n        streaming\n        tools\n        vision\n      }\n      official {\n        ...PriceFields\n      }\n      groups {\n        id\n        label\n        pricingPlan\n        pricing {\n          ...PriceFields\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Announcements($language: String) {\n    announcements(language: $language) {\n      unreadCount\n      items {\n        id\n        title\n        body\n        publishedAt\n        read\n      }\n    }\n  }\n"): (typeof documents)["\n  query Announcements($language: String) {\n    announcements(language: $language) {\n      unreadCount\n      items {\n        id\n        title\n        body\n        publishedAt\n        read\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkAnnouncementRead($id: ID!) {\n    markAnnouncementRead(id: $id) {\n      id\n      read\n    }\n  }\n"): (typeof documents)["\n  mutation MarkAnnouncementRead($id: ID!) {\n    markAnnouncementRead(id: $id) {\n      id\n      read\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkAllAnnouncementsRead {\n    markAllAnnouncementsRead\n  }\n"): (typeof documents)["\n  mutation MarkAllAnnouncementsRead {\n    markAllAnnouncementsRead\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationMembers($organizationId: ID!) {\n    organization(id: $organizationId) {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n      email\n      role\n      monthlySpendCap\n      monthSpent\n      joinedAt\n    }\n  }\n"): (typeof documents)["\n  query OrganizationMembers($organizationId: ID!) {\n    organization(id: $organizationId) {\n      id\n      name\n      role\n      ownerId\n      monthlySpendCap\n      myMonthlySpendCap\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n      email\n      role\n      monthlySpendCap\n      monthSpent\n      joinedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationDashboard($organizationId: ID!, $withBalance: Boolean!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    organizationBalance(organizationId: $organizationId) @include(if: $withBalance) {\n      balanceUsd\n      paidUsd\n      bonusUsd\n    }\n    organizationUsageTimeseries(organizationId: $organizationId, from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        requests\n      }\n    }\n  }\n"): (typeof documents)["\n  query OrganizationDashboard($organizationId: ID!, $withBalance: Boolean!, $chartFrom: DateTimeISO!, $now: DateTimeISO!) {\n    organizationBalance(organizationId: $organizationId) @include(if: $withBalance) {\n      balanceUsd\n      paidUsd\n      bonusUsd\n    }\n    organizationUsageTimeseries(organizationId: $organizationId, from: $chartFrom, to: $now, bucket: \"day\") {\n      points {\n        ts\n        spendUsd\n        requests\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationInvitations($organizationId: ID!) {\n    organizationInvitations(organizationId: $organizationId) {\n      id\n      email\n      role\n      status\n      createdAt\n      expiresAt\n    }\n  }\n"): (typeof documents)["\n  query OrganizationInvitations($organizationId: ID!) {\n    organizationInvitations(organizationId: $organizationId) {\n      id\n      email\n      role\n      status\n      createdAt\n      expiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeInvitation($organizationId: ID!, $invitationId: ID!) {\n    revokeInvitation(organizationId: $organizationId, invitationId: $invitationId)\n  }\n"): (typeof documents)["\n  mutation RevokeInvitation($organizationId: ID!, $invitationId: ID!) {\n    revokeInvitation(organizationId: $organizationId, invitationId: $invitationId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationKeys($organizationId: ID!) {\n    organizationKeys(organizationId: $organizationId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      createdAt\n      lastUsed\n      createdBy\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n"): (typeof documents)["\n  query OrganizationKeys($organizationId: ID!) {\n    organizationKeys(organizationId: $organizationId) {\n      id\n      label\n      providerFamily\n      routeGroup\n      monthlySpendCap\n      createdAt\n      lastUsed\n      createdBy\n    }\n    organizationMembers(organizationId: $organizationId) {\n      userId\n      name\n    }\n    catalogModels {\n      id\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateOrganizationKey($organizationId: ID!, $input: CreateKeyInput!) {\n    createOrganizationKey(organizationId: $organizationId, input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  mutation CreateOrganizationKey($organizationId: ID!, $input: CreateKeyInput!) {\n    createOrganizationKey(organizationId: $organizationId, input: $input) {\n      id\n      key\n      label\n      providerFamily\n      routeGroup\n      pricingPlan\n      monthlySpendCap\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeOrganizationKey($organizationId: ID!, $keyId: ID!) {\n    revokeOrganizationKey(organizationId: $organizationId, keyId: $keyId)\n  }\n"): (typeof documents)["\n  mutation RevokeOrganizationKey($organizationId: ID!, $keyId: ID!) {\n    revokeOrganizationKey(organizationId: $organizationId, keyId: $keyId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription MembersUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription MembersUsage($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateOrganization($input: UpdateOrganizationInput!) {\n    updateOrganization(input: $input) {\n      id\n      name\n      monthlySpendCap\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateOrganization($input: UpdateOrganizationInput!) {\n    updateOrganization(input: $input) {\n      id\n      name\n      monthlySpendCap\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InviteMember($input: InviteMemberInput!) {\n    inviteMember(input: $input) {\n      id\n      email\n      status\n    }\n  }\n"): (typeof documents)["\n  mutation InviteMember($input: InviteMemberInput!) {\n    inviteMember(input: $input) {\n      id\n      email\n      status\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateMember($input: UpdateMemberInput!) {\n    updateMember(input: $input) {\n      userId\n      role\n      monthlySpendCap\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateMember($input: UpdateMemberInput!) {\n    updateMember(input: $input) {\n      userId\n      role\n      monthlySpendCap\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RemoveMember($organizationId: ID!, $userId: ID!) {\n    removeMember(organizationId: $organizationId, userId: $userId)\n  }\n"): (typeof documents)["\n  mutation RemoveMember($organizationId: ID!, $userId: ID!) {\n    removeMember(organizationId: $organizationId, userId: $userId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LeaveOrganization($organizationId: ID!) {\n    leaveOrganization(organizationId: $organizationId)\n  }\n"): (typeof documents)["\n  mutation LeaveOrganization($organizationId: ID!) {\n    leaveOrganization(organizationId: $organizationId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation TransferOwnership($organizationId: ID!, $userId: ID!) {\n    transferOwnership(organizationId: $organizationId, userId: $userId) {\n      id\n      role\n      ownerId\n    }\n  }\n"): (typeof documents)["\n  mutation TransferOwnership($organizationId: ID!, $userId: ID!) {\n    transferOwnership(organizationId: $organizationId, userId: $userId) {\n      id\n      role\n      ownerId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateOrganization($input: CreateOrganizationInput!) {\n    createOrganization(input: $input) {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  mutation CreateOrganization($input: CreateOrganizationInput!) {\n    createOrganization(input: $input) {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationPayments($organizationId: ID!, $language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    organizationInvoices(organizationId: $organizationId, limit: 20) {\n      ...InvoiceFields\n    }\n    organizationBalance(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n    }\n  }\n"): (typeof documents)["\n  query OrganizationPayments($organizationId: ID!, $language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    organizationInvoices(organizationId: $organizationId, limit: 20) {\n      ...InvoiceFields\n    }\n    organizationBalance(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateOrganizationInvoice($organizationId: ID!, $amountUsd: String!, $method: String!) {\n    createOrganizationInvoice(organizationId: $organizationId, amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n"): (typeof documents)["\n  mutation CreateOrganizationInvoice($organizationId: ID!, $amountUsd: String!, $method: String!) {\n    createOrganizationInvoice(organizationId: $organizationId, amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription OrganizationWallet($organizationId: ID!) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      transaction {\n        kind\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription OrganizationWallet($organizationId: ID!) {\n    balanceChanged(organizationId: $organizationId) {\n      paidUsd\n      bonusUsd\n      balanceUsd\n      transaction {\n        kind\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationStatement($organizationId: ID!, $month: String!) {\n    organizationStatement(organizationId: $organizationId, month: $month) {\n      month\n      openingBalance\n      closingBalance\n      totalSpend\n      invoicesCredited\n      otherChanges\n      invoices {\n        id\n        amount\n        status\n        paidAt\n      }\n      byMember {\n        userId\n        name\n        spend\n        requests\n      }\n      byModel {\n        model\n        spend\n        requests\n      }\n      byKey {\n        apiKeyId\n        label\n        memberName\n        spend\n        requests\n      }\n    }\n  }\n"): (typeof documents)["\n  query OrganizationStatement($organizationId: ID!, $month: String!) {\n    organizationStatement(organizationId: $organizationId, month: $month) {\n      month\n      openingBalance\n      closingBalance\n      totalSpend\n      invoicesCredited\n      otherChanges\n      invoices {\n        id\n        amount\n        status\n        paidAt\n      }\n      byMember {\n        userId\n        name\n        spend\n        requests\n      }\n      byModel {\n        model\n        spend\n        requests\n      }\n      byKey {\n        apiKeyId\n        label\n        memberName\n        spend\n        requests\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Payments($language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    invoices(limit: 20) {\n      ...InvoiceFields\n    }\n  }\n"): (typeof documents)["\n  query Payments($language: String) {\n    paymentConfig(language: $language) {\n      ...PaymentConfigFields\n    }\n    invoices(limit: 20) {\n      ...InvoiceFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PaymentConfigFields on PaymentConfig {\n    paymentsEnabled\n    rubPerUsd\n    agreementAccepted\n    bonusEnabled\n    bonusExpiryDays\n    bonusTiers {\n      minUsd\n      rate\n    }\n    methods {\n      id\n      label\n      currency\n      minUsd\n      maxUsd\n      enabled\n    }\n    agreement {\n      title\n      intro\n      termsVersion\n      privacyVersion\n      sections {\n        title\n        text\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment PaymentConfigFields on PaymentConfig {\n    paymentsEnabled\n    rubPerUsd\n    agreementAccepted\n    bonusEnabled\n    bonusExpiryDays\n    bonusTiers {\n      minUsd\n      rate\n    }\n    methods {\n      id\n      label\n      currency\n      minUsd\n      maxUsd\n      enabled\n    }\n    agreement {\n      title\n      intro\n      termsVersion\n      privacyVersion\n      sections {\n        title\n        text\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment InvoiceFields on Invoice {\n    id\n    method\n    amountRequested\n    currency\n    usdCredit\n    bonusRate\n    bonusUsd\n    status\n    paymentUrl\n    createdAt\n    paidAt\n  }\n"): (typeof documents)["\n  fragment InvoiceFields on Invoice {\n    id\n    method\n    amountRequested\n    currency\n    usdCredit\n    bonusRate\n    bonusUsd\n    status\n    paymentUrl\n    createdAt\n    paidAt\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AcceptAgreement($language: String) {\n    acceptAgreement(language: $language, surface: \"cabinet\") {\n      accepted\n    }\n  }\n"): (typeof documents)["\n  mutation AcceptAgreement($language: String) {\n    acceptAgreement(language: $language, surface: \"cabinet\") {\n      accepted\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateInvoice($amountUsd: String!, $method: String!) {\n    createInvoice(amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n"): (typeof documents)["\n  mutation CreateInvoice($amountUsd: String!, $method: String!) {\n    createInvoice(amountUsd: $amountUsd, method: $method) {\n      ...InvoiceFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription InvoiceUpdated {\n    invoiceUpdated {\n      ...InvoiceFields\n    }\n  }\n"): (typeof documents)["\n  subscription InvoiceUpdated {\n    invoiceUpdated {\n      ...InvoiceFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query IdentityLinks {\n    identityLinks {\n      email\n      emailVerified\n      hasPassword\n      linked\n      messengerLabel\n    }\n  }\n"): (typeof documents)["\n  query IdentityLinks {\n    identityLinks {\n      email\n      emailVerified\n      hasPassword\n      linked\n      messengerLabel\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation VerifyEmail($code: String!) {\n    verifyEmail(code: $code) {\n      userId\n      emailVerified\n    }\n  }\n"): (typeof documents)["\n  mutation VerifyEmail($code: String!) {\n    verifyEmail(code: $code) {\n      userId\n      emailVerified\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResendVerification($language: String) {\n    resendVerification(language: $language) {\n      ok\n    }\n  }\n"): (typeof documents)["\n  mutation ResendVerification($language: String) {\n    resendVerification(language: $language) {\n      ok\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartEmailLink($email: String!, $language: String) {\n    startEmailLink(email: $email, language: $language) {\n      ok\n      expiresAt\n    }\n  }\n"): (typeof documents)["\n  mutation StartEmailLink($email: String!, $language: String) {\n    startEmailLink(email: $email, language: $language) {\n      ok\n      expiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConfirmEmailLink($email: String!, $code: String!, $password: String!) {\n    confirmEmailLink(email: $email, code: $code, password: $password) {\n      ok\n      email\n    }\n  }\n"): (typeof documents)["\n  mutation ConfirmEmailLink($email: String!, $code: String!, $password: String!) {\n    confirmEmailLink(email: $email, code: $code, password: $password) {\n      ok\n      email\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartMessengerLink {\n    startMessengerLink {\n      botUrl\n      expiresAt\n      token\n    }\n  }\n"): (typeof documents)["\n  mutation StartMessengerLink {\n    startMessengerLink {\n      botUrl\n      expiresAt\n      token\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UnlinkMessenger {\n    unlinkMessenger\n  }\n"): (typeof documents)["\n  mutation UnlinkMessenger {\n    unlinkMessenger\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ServiceStatus {\n    serviceStatus {\n      generatedAt\n      groups {\n        id\n        label\n        status\n        uptime {\n          last24h\n          last7d\n          last30d\n          allTime\n        }\n        models {\n          id\n          label\n          status\n          checkedAt\n          history {\n            observedAt\n            status\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ServiceStatus {\n    serviceStatus {\n      generatedAt\n      groups {\n        id\n        label\n        status\n        uptime {\n          last24h\n          last7d\n          last30d\n          allTime\n        }\n        models {\n          id\n          label\n          status\n          checkedAt\n          history {\n            observedAt\n            status\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ServiceStatusChanged {\n    serviceStatusChanged {\n      groupId\n      modelId\n      status\n      observedAt\n    }\n  }\n"): (typeof documents)["\n  subscription ServiceStatusChanged {\n    serviceStatusChanged {\n      groupId\n      modelId\n      status\n      observedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsageEvent($requestId: ID!) {\n    usageEvent(requestId: $requestId) {\n      ...UsageEventFields\n    }\n  }\n"): (typeof documents)["\n  query UsageEvent($requestId: ID!) {\n    usageEvent(requestId: $requestId) {\n      ...UsageEventFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Usage($org: Boolean!, $organizationId: ID!, $memberId: ID, $from: DateTimeISO, $to: DateTimeISO, $model: String, $group: String, $status: String, $providerFamily: String, $limit: Int) {\n    usage(from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @skip(if: $org) {\n      id\n      routeGroup\n      ...UsageEventFields\n    }\n    organizationUsage(organizationId: $organizationId, memberId: $memberId, from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @include(if: $org) {\n      id\n      routeGroup\n      memberId\n      memberName\n      ...OrganizationUsageEventFields\n    }\n  }\n"): (typeof documents)["\n  query Usage($org: Boolean!, $organizationId: ID!, $memberId: ID, $from: DateTimeISO, $to: DateTimeISO, $model: String, $group: String, $status: String, $providerFamily: String, $limit: Int) {\n    usage(from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @skip(if: $org) {\n      id\n      routeGroup\n      ...UsageEventFields\n    }\n    organizationUsage(organizationId: $organizationId, memberId: $memberId, from: $from, to: $to, model: $model, group: $group, status: $status, providerFamily: $providerFamily, limit: $limit) @include(if: $org) {\n      id\n      routeGroup\n      memberId\n      memberName\n      ...OrganizationUsageEventFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment UsageEventFields on UsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n"): (typeof documents)["\n  fragment UsageEventFields on UsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment OrganizationUsageEventFields on OrganizationUsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n"): (typeof documents)["\n  fragment OrganizationUsageEventFields on OrganizationUsageEvent {\n    requestId\n    createdAt\n    completedAt\n    model\n    providerFamily\n    routeGroupLabel\n    status\n    endpoint\n    clientSurface\n    promptTokens\n    completionTokens\n    totalTokens\n    cacheReadTokens\n    cacheWriteTokens\n    cacheHitRatio\n    amountUsd\n    officialCostUsd\n    savedUsd\n    latencyMs\n    errorCode\n    apiKey {\n      id\n      label\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription UsageLive($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        routeGroup\n        ...UsageEventFields\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription UsageLive($organizationId: ID) {\n    usageRecorded(organizationId: $organizationId) {\n      events {\n        id\n        routeGroup\n        ...UsageEventFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UsageCatalog {\n    catalogModels {\n      id\n      label\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n"): (typeof documents)["\n  query UsageCatalog {\n    catalogModels {\n      id\n      label\n      family\n      groups {\n        id\n        label\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query VideoTasks {\n    videoTasks(limit: 20) {\n      ...VideoTaskFields\n    }\n  }\n"): (typeof documents)["\n  query VideoTasks {\n    videoTasks(limit: 20) {\n      ...VideoTaskFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment VideoTaskFields on VideoTask {\n    id\n    model\n    status\n    progress\n    seconds\n    createdAt\n    completedAt\n    playbackUrl\n    error {\n      code\n      message\n    }\n  }\n"): (typeof documents)["\n  fragment VideoTaskFields on VideoTask {\n    id\n    model\n    status\n    progress\n    seconds\n    createdAt\n    completedAt\n    playbackUrl\n    error {\n      code\n      message\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription VideoTaskUpdated {\n    videoTaskUpdated {\n      ...VideoTaskFields\n    }\n  }\n"): (typeof documents)["\n  subscription VideoTaskUpdated {\n    videoTaskUpdated {\n      ...VideoTaskFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookEndpoints($language: String) {\n    webhookEndpoints {\n      id\n      url\n      description\n      eventTypes\n      enabled\n      disabledReason\n      createdAt\n    }\n    webhookEventTypes(language: $language) {\n      type\n      description\n    }\n  }\n"): (typeof documents)["\n  query WebhookEndpoints($language: String) {\n    webhookEndpoints {\n      id\n      url\n      description\n      eventTypes\n      enabled\n      disabledReason\n      createdAt\n    }\n    webhookEventTypes(language: $language) {\n      type\n      description\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebhookDeliveries($endpointId: ID!) {\n    webhookDeliveries(endpointId: $endpointId, limit: 20) {\n      id\n      messageId\n      eventType\n      status\n      attempts\n      lastStatusCode\n      lastError\n      lastDurationMs\n      lastAttemptAt\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  query WebhookDeliveries($endpointId: ID!) {\n    webhookDeliveries(endpointId: $endpointId, limit: 20) {\n      id\n      messageId\n      eventType\n      status\n      attempts\n      lastStatusCode\n      lastError\n      lastDurationMs\n      lastAttemptAt\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      secret\n    }\n  }\n"): (typeof documents)["\n  mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {\n    createWebhookEndpoint(input: $input) {\n      id\n      secret\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateWebhookEndpoint($input: UpdateWebhookEndpointInput!) {\n    updateWebhookEndpoint(input: $input) {\n      id\n      enabled\n      disabledReason\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteWebhookEndpoint($id: ID!) {\n    deleteWebhookEndpoint(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RotateWebhookSecret($id: ID!) {\n    rotateWebhookSecret(id: $id) {\n      id\n      secret\n    }\n  }\n"): (typeof documents)["\n  mutation RotateWebhookSecret($id: ID!) {\n    rotateWebhookSecret(id: $id) {\n      id\n      secret\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendTestWebhook($endpointId: ID!) {\n    sendTestWebhook(endpointId: $endpointId)\n  }\n"): (typeof documents)["\n  mutation SendTestWebhook($endpointId: ID!) {\n    sendTestWebhook(endpointId: $endpointId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReplayWebhookDelivery($deliveryId: ID!) {\n    replayWebhookDelivery(deliveryId: $deliveryId) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation ReplayWebhookDelivery($deliveryId: ID!) {\n    replayWebhookDelivery(deliveryId: $deliveryId) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Me {\n    me {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n    }\n  }\n"): (typeof documents)["\n  query Me {\n    me {\n      userId\n      username\n      email\n      emailVerified\n      isAdmin\n      balanceUsd\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;