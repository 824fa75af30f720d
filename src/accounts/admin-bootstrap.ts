import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../shared/errors.js';
import { parseInput } from '../shared/validation.js';
import { registerInput, type RegisterInput } from './accounts.schemas.js';
import { toAccountView, type AccountView } from './account-view.js';
import { hashPassword } from './password.js';
import { User } from './user.entity.js';

/** Operator tasks run from the command line: the first admin, or promoting an account. */
export class AdminBootstrap {
  constructor(private readonly orm: MikroORM) {}

  /** Whether any account is an admin (a new deployment has none until `npm run admin -- create`). */
  async hasAdmin(): Promise<boolean> {
    const rows = await this.orm.em.fork().execute<{ found: number }[]>('select 1 as found from users where is_admin limit 1');
    return rows.length > 0;
  }

  async createAdmin(raw: RegisterInput): Promise<AccountView> {
    const input = parseInput(registerInput, raw);
    const em = this.orm.em.fork();
    const [taken] = await em.execute<{ n: string }[]>(
      'select count(*) as n from users where lower(username) = lower(?) or lower(email) = lower(?)',
      [input.username, input.email],
    );
    if (Number(taken!.n) > 0) throw new DomainError('conflict', 'An account with this username or e-mail already exists; use `promote`');
    const user = em.create(User, {
      username: input.username,
      email: input.email,
      emailVerified: true,
      isAdmin: true,
      passwordHash: await hashPassword(input.password),
    });
    await em.flush();
    return toAccountView(user);
  }

  async promote(login: string): Promise<AccountView> {
    const em = this.orm.em.fork();
    const rows = await em.execute<{ id: string }[]>('select id from users where lower(username) = lower(?) or lower(email) = lower(?)', [login, login]);
    if (rows.length !== 1) throw new DomainError('not_found', `No account with login ${JSON.stringify(login)}`);
    const user = await em.findOneOrFail(User, { id: rows[0]!.id });
    user.isAdmin = true;
    await em.flush();
    return toAccountView(user);
  }
}
