/** Who is calling a cabinet operation. Services take it as their first argument. */
export interface Actor {
  userId: string;
  isAdmin: boolean;
  sessionId: string;
}

/** The caller of an operation that needs no sign-in (register, login). */
export interface Caller {
  clientAddress: string | null;
  userAgent: string | null;
}
