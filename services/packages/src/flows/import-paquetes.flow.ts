import { packagesEvents, type PackageImportError, type ParsedRequestOf, type TenantContext, type packagesSubjects } from '@erp/contracts';
import { enqueueEvent, type Bus } from '@erp/bus';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { findPaqueteIdsByWr, insertNewPaquetes, type NewPaquete } from '../db/paquete.repository';
import type { PackagesDb } from '../db/tables';
import { ESTADO_EN_BODEGA, sucursalQuery, buildReply, splitRepeats, validateItems, type ValidItem } from '../domain/import-batch';
import { busGateway } from '../ports/gateway.port';
import { busInventory } from '../ports/inventory.port';

export type ImportRequest = ParsedRequestOf<typeof packagesSubjects, 'packages.import'>;

interface AcceptedItem extends ValidItem {
  sucursalId: number;
  usuarioId: number | null;
}

/**
 * Imports a batch in a fixed number of round trips whatever its size: one request to inventory
 * for every branch and one to the gateway for every advisor code (in parallel), then one
 * insert, at most one select for the wr that already existed, and one outbox row.
 */
export async function importPaquetes(
  deps: { db: Kysely<PackagesDb>; bus: Bus; onCommitted: () => void },
  { packages: paquetes }: ImportRequest,
  ctx: TenantContext,
) {
  const { db, bus, onCommitted } = deps;
  const empresaId = ctx.empresa.id;
  const { valid, errors } = validateItems(paquetes);

  const accepted: AcceptedItem[] = [];
  const refused: PackageImportError[] = [...errors];
  if (valid.length > 0) {
    const codigos = [...new Set(valid.map((v) => v.item.codigo_asesor))];
    const [sucursales, usuarios] = await Promise.all([
      busInventory(bus).resolveSucursal(ctx, { items: valid.map((v) => sucursalQuery(v.item)) }),
      busGateway(bus).usuariosByCodigo(ctx, { codigos }),
    ]);
    valid.forEach((entry, i) => {
      const sucursal = sucursales[i];
      if (!sucursal) throw new Error('inventory.sucursal.resolve answered fewer items than asked');
      if (!sucursal.ok) refused.push({ index: entry.index, wr: entry.item.wr, message: sucursal.message });
      else accepted.push({ ...entry, sucursalId: sucursal.id_sucursal, usuarioId: usuarios[entry.item.codigo_asesor] ?? null });
    });
  }

  const { firsts, repeats } = splitRepeats(accepted);
  // Rows go in wr order so concurrent imports wait on each other's keys in one order, never in a cycle.
  const rows = firsts.map((entry) => toRow(empresaId, entry)).sort((a, b) => (a.wr < b.wr ? -1 : a.wr > b.wr ? 1 : 0));
  if (rows.length === 0) return buildReply({ firsts, repeats, errors: refused, created: new Map(), existing: new Map() });
  const { created, existing } = await inTransaction(db, async (trx) => {
    const created = await insertNewPaquetes(trx, rows);
    const existing = await findPaqueteIdsByWr(
      trx,
      empresaId,
      rows.filter((r) => !created.has(r.wr)).map((r) => r.wr),
    );
    if (created.size > 0) {
      await enqueueEvent(
        trx,
        packagesEvents,
        'events.packages.package.imported',
        {
          empresa_id: empresaId,
          paquetes: rows.flatMap((r) => (created.has(r.wr) ? [{ id: created.get(r.wr)!, wr: r.wr, id_sucursal: r.sucursal_id }] : [])),
        },
        ctx,
      );
    }
    return { created, existing };
  });
  if (created.size > 0) onCommitted();

  return buildReply({ firsts, repeats, errors: refused, created, existing });
}

function toRow(empresaId: number, { item, sucursalId, usuarioId }: AcceptedItem): NewPaquete {
  return {
    empresa_id: empresaId,
    sucursal_id: sucursalId,
    usuario_id: usuarioId,
    codigo_asesor: item.codigo_asesor,
    cliente: item.cliente,
    wr: item.wr,
    guia: item.guia,
    embalaje: item.embalaje,
    piezas: item.piezas,
    // JSON numbers become numeric through their shortest decimal text, which Postgres reads exactly.
    peso: String(item.peso),
    volumen: item.volumen === null ? null : String(item.volumen),
    precio: String(item.precio),
    cuenta_a_terceros: String(item.cuenta_a_terceros),
    otros: String(item.otros),
    total: String(item.total),
    transportista: item.transportista,
    consignatario: item.consignatario,
    transportador: item.transportador,
    seguimiento: item.seguimiento,
    nota: item.nota,
    estado: ESTADO_EN_BODEGA,
  };
}
