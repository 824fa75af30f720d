import { parseArgs } from 'node:util';
import { DomainError } from '../shared/errors.js';
import { AdminBootstrap } from '../accounts/admin-bootstrap.js';
import { CatalogService } from '../catalog/catalog.service.js';
import { runCli } from './run-cli.js';

const USAGE = `usage: npm run admin -- create --email EMAIL --password PASSWORD [--username NAME]
       npm run admin -- promote --login USERNAME_OR_EMAIL
       npm run admin -- load-catalog   (replaces the stored catalog with BAIKAL_CATALOG, or the shipped default)`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    email: { type: 'string' },
    password: { type: 'string' },
    username: { type: 'string' },
    login: { type: 'string' },
  },
});

await runCli(async (db, config, log) => {
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
      case 'load-catalog': {
        const catalog = new CatalogService({ orm: db.orm, config, log });
        await catalog.load();
        const loaded = await catalog.reloadFromFile();
        process.stdout.write(`catalog version ${loaded.version} loaded: ${loaded.models.size} models\n`);
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
