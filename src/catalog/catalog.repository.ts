import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/** The stored catalog: one row (id 1) holding the whole document and its version. */
export interface StoredCatalog {
  data: unknown;
  version: number;
}

/**
 * The catalog's one row. SQL rather than an entity: the document is read whole and replaced whole under a
 * row lock, which is one statement each; nothing here benefits from a unit of work.
 */
export class CatalogRepository {
  constructor(private readonly orm: MikroORM) {}

  async current(): Promise<StoredCatalog | null> {
    const [row] = await this.orm.em.fork().execute<StoredCatalog[]>('select data, version from catalog where id = 1');
    return row ?? null;
  }

  /** Stores the first catalog unless another process stored one first. */
  async seed(data: unknown): Promise<void> {
    await this.orm.em.fork().execute(`insert into catalog (id, data, version) values (1, ?::jsonb, 1) on conflict (id) do nothing`, [JSON.stringify(data)]);
  }

  /**
   * Reads the catalog under a row lock, lets `change` compute the next document (it may throw to change
   * nothing) and stores it with the next version, in one transaction: edits from several processes queue.
   */
  async edit<T extends { data: unknown }>(change: (stored: StoredCatalog) => T & { version: number }): Promise<T> {
    return this.orm.em.fork().transactional(async (tx: EntityManager) => {
      const [row] = await tx.execute<StoredCatalog[]>('select data, version from catalog where id = 1 for update');
      if (!row) throw new Error('catalog not seeded');
      const next = change(row);
      await tx.execute('update catalog set data = ?::jsonb, version = ?, updated_at = now() where id = 1', [JSON.stringify(next.data), next.version]);
      return next;
    });
  }
}
