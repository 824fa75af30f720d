/** WEBHOOKS_* (docs/configuration.md): how deliveries are retried, leased and bounded. */
export interface WebhooksSettings {
  /** Delivery loops in this process (0: this process only serves the API). */
  workers: number;
  pollMs: number;
  /** How long a claimed delivery is held: longer than one attempt's bound (10 s); a killed process's deliveries are retried after it. */
  leaseMs: number;
  /** The unit of the retry schedule (RETRY_STEPS); 5 s in production. */
  retryBaseMs: number;
  /** An endpoint whose deliveries all failed for this long is disabled and its owner told. */
  disableAfterMs: number;
  /** Endpoints one account may have. */
  maxEndpoints: number;
  /** How long the old secret still signs after a rotation. */
  rotationGraceMs: number;
  /** Development and tests only: plain http and local addresses allowed. */
  allowInsecureUrls: boolean;
}
