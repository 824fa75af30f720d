import { DomainError } from './errors.js';

/** Who is calling a cabinet operation. Services take it as their first argument. */
export interface Actor {
  userId: string;
  isAdmin: boolean;
  sessionId: string;
}

/** Refuses an operation that needs an administrator (403 forbidden, reason admin_required). */
export function requireAdmin(actor: Actor): void {
  if (!actor.isAdmin) throw new DomainError('forbidden', 'This operation needs an administrator', { reason: 'admin_required' });
}

/** The caller of an operation that needs no sign-in (register, login). */
export interface Caller {
  clientAddress: string | null;
  userAgent: string | null;
  /** The origin (scheme and host) the request came to: links in e-mails point there when PUBLIC_URL is unset. */
  origin?: string | null;
}
