import { sql, type Kysely } from 'kysely';

/**
 * Export files moved to one store per writer, and a file's name starts with its writer
 * (`sales/empresa-…`). The files of earlier releases (in the one shared store, which no identity
 * may read any more) are written again: a completed export whose file has not expired goes back to
 * the queue for a new attempt, and the records of those files go (the old store's own age limit
 * removes them).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update exportaciones
    set estado = 'en_cola', objeto = null, objetos = null, bytes = null, cursor = null, error = null,
        lease_hasta = null, reintentar_at = null, completada = null, expira = null
    where estado = 'completada' and objeto is not null and position('/' in objeto) = 0 and expira > now()`.execute(db);
  await sql`update exportaciones set objeto = null where objeto is not null and position('/' in objeto) = 0`.execute(db);
  await sql`delete from archivos where position('/' in objeto) = 0`.execute(db);
}
