import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../shared/errors.js';
import { parseInput } from '../shared/validation.js';
import { registerInput, type RegisterInput } from './accounts.schemas.js';
import { toAccountView, type AccountView } from './account-view.js';
import { AccountsRepository } from './accounts.repository.js';
import { hashPassword } from './password.js';

/** Operator tasks run from the command line: the first admin, or promoting an account. */
export class AdminBootstrap {
  private readonly accounts: AccountsRepository;

  constructor(orm: MikroORM) {
    this.accounts = new AccountsRepository(orm);
  }

  /** Whether any account is an admin (a new deployment has none until `npm run admin -- create`). */
  hasAdmin(): Promise<boolean> {
    return this.accounts.hasAdmin();
  }

  async createAdmin(raw: RegisterInput): Promise<AccountView> {
    const input = parseInput(registerInput, raw);
    const taken = await this.accounts.namesTaken(input.username, input.email);
    if (taken.username || taken.email) throw new DomainError('conflict', 'An account with this username or e-mail already exists; use `promote`');
    const user = await this.accounts.insertUser({
      username: input.username,
      email: input.email,
      emailVerified: true,
      isAdmin: true,
      passwordHash: await hashPassword(input.password),
    });
    return toAccountView(user);
  }

  async promote(login: string): Promise<AccountView> {
    const ids = await this.accounts.idsByLogin(login);
    if (ids.length !== 1) throw new DomainError('not_found', `No account with login ${JSON.stringify(login)}`);
    return toAccountView(await this.accounts.makeAdmin(ids[0]!));
  }
}
