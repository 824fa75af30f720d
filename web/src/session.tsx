import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { useClient } from 'urql';
import { graphql } from './gql/index.js';
import type { MeQuery } from './gql/graphql.js';

export const MeDocument = graphql(`
  query Me {
    me {
      userId
      username
      email
      emailVerified
      isAdmin
      balanceUsd
    }
  }
`);

export type Account = MeQuery['me'];

interface Session {
  account: Account | null;
  loading: boolean;
  /** Reads the account again (after signing in or out, verifying, paying); resolves once it is known. */
  refresh(): Promise<void>;
  /** Raw API keys this tab has seen (created here or pasted), in memory only: never stored, never sent to our API. */
  keyring: KeyringEntry[];
  remember(entry: KeyringEntry): void;
  forget(secret: string): void;
}

export interface KeyringEntry {
  label: string;
  secret: string;
  providerFamily: string | null;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useClient();
  const [state, setState] = useState<{ account: Account | null; loading: boolean }>({ account: null, loading: true });
  const [keyring, setKeyring] = useState<KeyringEntry[]>([]);
  // Not signed in is an error of `me` (UNAUTHENTICATED): either way the answer settles who is here.
  const refresh = useCallback(async () => {
    const result = await client.query(MeDocument, {}, { requestPolicy: 'network-only' }).toPromise();
    setState({ account: result.error ? null : (result.data?.me ?? null), loading: false });
  }, [client]);
  useEffect(() => void refresh(), [refresh]);
  const value: Session = {
    account: state.account,
    loading: state.loading,
    refresh,
    keyring,
    remember: (entry) => setKeyring((all) => [entry, ...all.filter((e) => e.secret !== entry.secret)]),
    forget: (secret) => setKeyring((all) => all.filter((e) => e.secret !== secret)),
  };
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
