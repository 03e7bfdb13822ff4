/**
 * The triggers on `ventas` that keep `ventas_resumen_diario` (migration 0005); a bulk load
 * disables them and adds its rows with `addToDailySummarySql` afterwards.
 */
export const DAILY_SUMMARY_TRIGGERS = [
  'ventas_resumen_diario_insert',
  'ventas_resumen_diario_update',
  'ventas_resumen_diario_delete',
  'ventas_resumen_diario_truncate',
] as const;

/**
 * Adds the sales with `id >= fromId` to the daily summary in one statement: the migration's backfill
 * (every sale) and the bench loader's after its COPY (the sales it wrote) share it. Names are
 * unqualified: run it with `search_path` set to the sales schema. Keys are upserted in key order,
 * the order the triggers also lock rows in.
 */
export function addToDailySummarySql(fromId = 1): string {
  if (!Number.isSafeInteger(fromId)) throw new RangeError(`fromId must be an integer, got ${fromId}`);
  return `
    insert into ventas_resumen_diario as r (empresa_id, fecha, estado, documento_id, cantidad, total, iva, descuento)
    select empresa_id, fecha, estado, documento_id, count(*), sum(total), sum(iva), sum(descuento)
      from ventas
     where id >= ${fromId}
     group by empresa_id, fecha, estado, documento_id
     order by empresa_id, fecha, estado, documento_id
    on conflict (empresa_id, fecha, estado, documento_id) do update
       set cantidad = r.cantidad + excluded.cantidad,
           total = r.total + excluded.total,
           iva = r.iva + excluded.iva,
           descuento = r.descuento + excluded.descuento`;
}
