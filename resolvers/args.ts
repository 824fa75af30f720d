/** A domain input from GraphQL arguments: nulls dropped, except where null means something. */
export type DomainInput<T, Keep extends keyof T> = { [K in keyof T]: K extends Keep ? T[K] : Exclude<T[K], null> };

/**
 * GraphQL arguments as a domain input. Both speak camelCase, so nothing is renamed; but GraphQL gives
 * null for an optional argument left out, where a domain input leaves the field out. A null that
 * means something (clearing a spend cap) is kept by naming its field in `keep`.
 */
export function domainInput<T extends object, Keep extends keyof T = never>(args: T | null | undefined, ...keep: Keep[]): DomainInput<T, Keep> {
  const kept = new Set<PropertyKey>(keep);
  return Object.fromEntries(Object.entries(args ?? {}).filter(([key, value]) => value !== undefined && (value !== null || kept.has(key)))) as DomainInput<T, Keep>;
}

/**
 * `true` only when two input types name the same fields: a GraphQL input class and the service input (zod) it
 * stands for are written twice, and this ties them (`const match: SameFields<GraphQLInput, ServiceInput> = true`).
 */
export type SameFields<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
