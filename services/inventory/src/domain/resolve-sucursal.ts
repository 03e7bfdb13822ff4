export interface Branch {
  id: number;
  nombre: string;
}

export type BranchQuery = { id_sucursal: number } | { sucursal: string };
export type BranchResolution = { ok: true; id_sucursal: number; nombre: string } | { ok: false; message: string };

const normalise = (name: string) => name.trim().toLocaleLowerCase('es');

/**
 * Resolves a branch among the company's active branches: by id, or by name trimmed and
 * case-insensitive; a name shared by several active branches is ambiguous and refused.
 */
export function resolveBranch(branches: readonly Branch[], query: BranchQuery): BranchResolution {
  if ('id_sucursal' in query) {
    const found = branches.find((b) => b.id === query.id_sucursal);
    return found
      ? { ok: true, id_sucursal: found.id, nombre: found.nombre }
      : { ok: false, message: `La sucursal ${query.id_sucursal} no existe o está inactiva` };
  }
  const wanted = normalise(query.sucursal);
  const matches = branches.filter((b) => normalise(b.nombre) === wanted);
  if (matches.length === 1) return { ok: true, id_sucursal: matches[0]!.id, nombre: matches[0]!.nombre };
  if (matches.length === 0) return { ok: false, message: `La sucursal "${query.sucursal.trim()}" no existe o está inactiva` };
  return {
    ok: false,
    message: `El nombre de sucursal "${query.sucursal.trim()}" es ambiguo: coincide con ${matches.length} sucursales activas`,
  };
}
