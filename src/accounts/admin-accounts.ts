import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireAdmin, type Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { Topics, type PubSub } from '../shared/pubsub.js';
import { intParam, parseInput } from '../shared/validation.js';
import type { AdminKeyView, KeysService } from '../keys/keys.service.js';
import type { AdminAccountView } from './account-view.js';
import { AccountsRepository } from './accounts.repository.js';
import { AdminAccountsRepository } from './admin-accounts.repository.js';

export type { AdminAccountView } from './account-view.js';
export type { AdminKeyView } from '../keys/keys.service.js';

const searchInput = z.strictObject({
  search: z.string().trim().max(254, 'Search must be at most 254 characters').optional(),
  limit: intParam(1, 100, 25),
});
export type AdminAccountSearch = z.input<typeof searchInput>;
const userIdInput = z.strictObject({ userId: z.uuid('Not a valid account id') });

/** What the cabinet's admin pages read about accounts, and ending an account's sessions. Admins only. */
export class AdminAccountsService {
  private readonly reads: AdminAccountsRepository;
  private readonly accounts: AccountsRepository;

  constructor(private readonly deps: { orm: MikroORM; pubsub: PubSub; clock: Clock; keys: KeysService }) {
    this.reads = new AdminAccountsRepository(deps.orm);
    this.accounts = new AccountsRepository(deps.orm);
  }

  /** Accounts whose name, e-mail or id matches (newest first); every account when the search is empty. */
  async search(actor: Actor, raw: AdminAccountSearch): Promise<AdminAccountView[]> {
    requireAdmin(actor);
    const { search, limit } = parseInput(searchInput, raw);
    const pattern = search ? `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
    return this.reads.search(pattern, search, limit);
  }

  /** Every key of one account, revoked ones included, with their limit overrides. */
  async keysOf(actor: Actor, raw: { userId: string }): Promise<AdminKeyView[]> {
    requireAdmin(actor);
    const { userId } = parseInput(userIdInput, raw);
    return this.deps.keys.allOfAccount(userId);
  }

  /**
   * Ends every open session of an account (a stolen device, a departing employee): the sessions stop
   * authenticating at once, and their websockets close through the same sign-out events as a logout.
   */
  async endSessions(actor: Actor, raw: { userId: string }): Promise<number> {
    requireAdmin(actor);
    const { userId } = parseInput(userIdInput, raw);
    const now = this.deps.clock.now();
    const ended = await this.accounts.revokeSessionsOf(userId, now);
    for (const id of ended) this.deps.pubsub.publish(Topics.SessionEvents, userId, { kind: 'signed_out', sessionId: id, at: now });
    return ended.length;
  }
}
