import { sql, type Kysely, type Transaction } from 'kysely';
import type { GatewayDb, UsuariosTable } from './tables';

/**
 * The company's user for each code in one query. Codes compare trimmed and case-insensitive,
 * by Postgres alone; an active user wins over an inactive one, then the lowest id. Returns the
 * code as asked → user id; codes nobody has are absent.
 */
export async function findUsuarioIdsByCodigo(
  db: Kysely<GatewayDb>,
  empresaId: number,
  codigos: readonly string[],
): Promise<Record<string, number>> {
  const asked = [...new Set(codigos)];
  if (asked.length === 0) return {};
  const rows = await db
    .selectFrom(sql<{ codigo: string }>`(select unnest(${asked}::text[]) as codigo)`.as('c'))
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('usuarios as u')
          .select('u.id')
          .where('u.empresa_id', '=', empresaId)
          .where(sql<boolean>`lower(btrim(u.codigo)) = lower(btrim(c.codigo))`)
          .orderBy('u.activo', 'desc')
          .orderBy('u.id')
          .limit(1)
          .as('match'),
      (join) => join.onTrue(),
    )
    .select(['c.codigo', 'match.id'])
    .execute();
  return Object.fromEntries(rows.map((r) => [r.codigo, r.id]));
}

export async function insertUsuario(
  db: Kysely<GatewayDb> | Transaction<GatewayDb>,
  usuario: { empresa_id: number; nombre: string; rol: UsuariosTable['rol']; codigo: string | null; activo: boolean },
): Promise<number> {
  const { id } = await db.insertInto('usuarios').values(usuario).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function usuarioBelongsTo(db: Kysely<GatewayDb>, empresaId: number, usuarioId: number): Promise<boolean> {
  return (
    (await db.selectFrom('usuarios').select('id').where('id', '=', usuarioId).where('empresa_id', '=', empresaId).executeTakeFirst()) !==
    undefined
  );
}
