import type { gatewayDirectorySubjects } from '@erp/contracts';
import type { Handlers } from '@erp/bus';
import type { Kysely } from 'kysely';
import { findUsuarioIdsByCodigo } from '../db/usuario.repository';
import type { GatewayDb } from '../db/tables';

/** Lets other services link records to the company's users without reading the gateway schema. */
export function directoryHandlers(db: Kysely<GatewayDb>): Handlers<typeof gatewayDirectorySubjects> {
  return {
    'gateway.usuario.by-codigo': async ({ codigos }, ctx) => findUsuarioIdsByCodigo(db, ctx.empresa.id, codigos),
  };
}
