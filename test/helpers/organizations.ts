import { registerRest, http } from './clients.js';
import type { TestGateway } from './gateway.js';

/** A signed-in account whose e-mail is verified (as the payments and alerts helpers do it: in the database). */
export async function verifiedAccount(gw: Pick<TestGateway, 'url' | 'db'>) {
  const registered = await registerRest(gw.url);
  await gw.db.query('update users set email_verified = true where id = $1', [registered.account.user_id]);
  return { token: registered.token, userId: registered.account.user_id as string, email: registered.input.email };
}

export type Account = Awaited<ReturnType<typeof verifiedAccount>>;
export const ROLE_NAMES = ['owner', 'admin', 'billing', 'member'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/**
 * An organization with one account in each role, made through REST (the owner founds it); the other members are
 * written straight into organization_members: how one joins is the flows test's subject, not the fixture's.
 */
export async function organizationWithRoles(gw: Pick<TestGateway, 'url' | 'db'>, name = 'Team') {
  const owner = await verifiedAccount(gw);
  const created = await http(gw.url, 'POST', '/orgs', { token: owner.token, body: { name } });
  if (created.status !== 201) throw new Error(`create organization: ${created.status} ${created.text}`);
  const id = created.body.id as string;
  const members = { owner } as Record<RoleName, Account>;
  for (const role of ['admin', 'billing', 'member'] as const) {
    members[role] = await verifiedAccount(gw);
    await gw.db.query('insert into organization_members (organization_id, user_id, role) values ($1, $2, $3)', [id, members[role].userId, role]);
  }
  return { id, members };
}

/** The newest invitation link mailed to `email` by the development transport (email_outbox), and its token. */
export async function outboxInvitation(gw: Pick<TestGateway, 'db'>, email: string): Promise<{ link: string; token: string }> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const [row] = await gw.db.query<{ text_body: string }>('select text_body from email_outbox where to_address = $1 order by created_at desc limit 1', [email]);
    const link = row && /(\S+\/app\/invite\?token=(\S+))/.exec(row.text_body);
    if (link) return { link: link[1]!, token: decodeURIComponent(link[2]!) };
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  throw new Error(`no invitation mailed to ${email}`);
}
