import type { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids.js';

/** The email_outbox table: what the development transport "sent", kept whole for the developer to read. */
export class OutboxRepository {
  constructor(private readonly orm: MikroORM) {}

  async insert(mail: { to: string; subject: string; text: string }): Promise<void> {
    await this.orm.em.fork().execute('insert into email_outbox (id, to_address, subject, text_body) values (?, ?, ?, ?)', [newId(), mail.to, mail.subject, mail.text]);
  }
}
