import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useClient } from 'urql';
import { graphql } from './gql/index.js';
import type { OrganizationRole, OrganizationsQuery } from './gql/graphql.js';
import { useSession } from './session.js';

/**
 * Which ledger owner the cabinet shows: the signed-in account ("personal") or one of the organizations it belongs
 * to (issue 56). The choice is remembered in localStorage per browser; an organization the account has left (or was
 * removed from) falls back to personal. The pages that have an organization view (dashboard, keys, usage, payments) read it.
 */
export const OrganizationsDocument = graphql(`
  query Organizations {
    organizations {
      id
      name
      role
      ownerId
      monthlySpendCap
      myMonthlySpendCap
      createdAt
    }
  }
`);

export type Organization = OrganizationsQuery['organizations'][number];

const STORAGE_KEY = 'baikal.context';

/**
 * What each role may do: a copy of src/organizations/roles.ts CAPABILITIES (the web bundle does not import the
 * server's code). It only hides buttons a role may not use; the server checks every operation anyway.
 */
const CAPABILITIES = {
  manageMembers: ['OWNER', 'ADMIN'],
  manageKeys: ['OWNER', 'ADMIN'],
  billing: ['OWNER', 'BILLING'],
  viewAllUsage: ['OWNER', 'ADMIN', 'BILLING'],
  transferOwnership: ['OWNER'],
  /** The organization's balance: billing roles and the managers (the server's rule for organizationBalance). */
  viewBalance: ['OWNER', 'ADMIN', 'BILLING'],
} as const satisfies Record<string, readonly OrganizationRole[]>;
export type Capability = keyof typeof CAPABILITIES;

export function may(role: OrganizationRole, capability: Capability): boolean {
  return (CAPABILITIES[capability] as readonly OrganizationRole[]).includes(role);
}

interface OrganizationContext {
  organizations: Organization[];
  /** The organization the cabinet shows, or null for the personal account. */
  current: Organization | null;
  /** Switches to an organization (its id) or to the personal account (null), and remembers it. */
  select(id: string | null): void;
  /** True while a remembered organization is not known yet (pages wait rather than show the personal data first). */
  loading: boolean;
  /** Reads the list again (after creating, joining, leaving, renaming); resolves once it is known. */
  refresh(): Promise<Organization[]>;
}

const Context = createContext<OrganizationContext | null>(null);

export function OrganizationProvider({ children }: { children: ReactNode }) {
  const client = useClient();
  const { account } = useSession();
  const [organizations, setOrganizations] = useState<Organization[] | null>(null);
  const [selected, setSelected] = useState<string | null>(() => localStorage.getItem(STORAGE_KEY));
  const refresh = useCallback(async () => {
    const result = await client.query(OrganizationsDocument, {}, { requestPolicy: 'network-only' }).toPromise();
    const list = result.data?.organizations ?? [];
    setOrganizations(list);
    return list;
  }, [client]);
  // A new account (sign-in, sign-out) has its own organizations.
  useEffect(() => {
    if (account) void refresh();
    else setOrganizations(null);
  }, [account?.userId, refresh]);
  const select = useCallback((id: string | null) => {
    if (id) localStorage.setItem(STORAGE_KEY, id);
    else localStorage.removeItem(STORAGE_KEY);
    setSelected(id);
  }, []);
  const value = useMemo<OrganizationContext>(
    () => ({
      organizations: organizations ?? [],
      current: organizations?.find((o) => o.id === selected) ?? null,
      loading: selected !== null && organizations === null,
      select,
      refresh,
    }),
    [organizations, selected, select, refresh],
  );
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useOrganization(): OrganizationContext {
  const value = useContext(Context);
  if (!value) throw new Error('useOrganization outside OrganizationProvider');
  return value;
}

/** The organization the cabinet shows, for a page that only exists in an organization context. */
export function useCurrentOrganization(): Organization | null {
  return useOrganization().current;
}
