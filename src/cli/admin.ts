import { parseArgs } from 'node:util';
import { DomainError } from '../shared/errors.js';
import { AdminBootstrap } from '../accounts/admin-bootstrap.js';
import { runCli } from './run-cli.js';

const USAGE = `usage: npm run admin -- create --email EMAIL --password PASSWORD [--username NAME]
       npm run admin -- promote --login USERNAME_OR_EMAIL`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    email: { type: 'string' },
    password: { type: 'string' },
    username: { type: 'string' },
    login: { type: 'string' },
  },
});

await runCli(async (db) => {
  const admin = new AdminBootstrap(db.orm);
  try {
    switch (positionals[0]) {
      case 'create': {
        const account = await admin.createAdmin({
          email: values.email ?? '',
          password: values.password ?? '',
          username: values.username ?? (values.email ?? '').split('@')[0] ?? '',
        });
        process.stdout.write(`admin account created: ${account.userId} (${account.email})\n`);
        return;
      }
      case 'promote': {
        const account = await admin.promote(values.login ?? '');
        process.stdout.write(`account ${account.userId} is now an admin\n`);
        return;
      }
      default:
        throw new Error(USAGE);
    }
  } catch (error) {
    if (error instanceof DomainError && error.issues.length) {
      throw new Error(error.issues.map((issue) => `--${issue.loc.join('.')}: ${issue.msg}`).join('\n'));
    }
    throw error;
  }
});
