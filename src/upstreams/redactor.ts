/**
 * Scrubs upstream credentials from text bound for the operator log. Upstreams (and the proxies in
 * front of them) may echo the key they were sent in an error text or an in-band stream error; the log
 * must hold no credential. One instance per process, built from the configured upstreams and owned by
 * the `UpstreamClient`, which is where every upstream's words enter the gateway.
 */
export class CredentialRedactor {
  private credentials: string[];

  constructor(credentials: Iterable<string>) {
    this.credentials = CredentialRedactor.distinct(credentials);
  }

  /** The secrets of a new set of upstreams (an admin's edit): those of the old set stay too, for answers still in flight. */
  add(credentials: Iterable<string>): void {
    this.credentials = CredentialRedactor.distinct([...this.credentials, ...credentials]);
  }

  private static distinct(credentials: Iterable<string>): string[] {
    return [...new Set([...credentials].filter((c) => c.length > 0))];
  }

  static forUpstreams(upstreams: readonly { credentials: readonly { secret: string }[] }[]): CredentialRedactor {
    return new CredentialRedactor(upstreams.flatMap((u) => u.credentials.map((c) => c.secret)));
  }

  /** The text with every known credential replaced by `[redacted]`. */
  redact(text: string): string {
    for (const credential of this.credentials) if (text.includes(credential)) text = text.replaceAll(credential, '[redacted]');
    return text;
  }
}
