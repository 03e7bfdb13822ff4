/**
 * Columns a service writes on its own, whatever the requests: a key's last use (written in
 * batches a moment after the request that used it) and the mark of its expiry notice. A snapshot
 * that judges what a request changed leaves them out.
 */
const BOOKKEEPING: Readonly<Record<string, readonly string[]>> = {
  'gateway.api_keys': ['ultimo_uso', 'ultima_direccion', 'aviso_vencimiento'],
};

/** SQL for the text of a row `x` of `schema.table`, without its bookkeeping columns. */
export function rowText(schema: string, table: string): string {
  const left = BOOKKEEPING[`${schema}.${table}`];
  return left ? `(to_jsonb(x) - array[${left.map((c) => `'${c}'`).join(', ')}])::text` : 'x::text';
}
