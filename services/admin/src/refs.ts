/** The ids a fixture's entities were seeded with, by their `ref`, for one kind. */
export type RefMap = Record<string, number>;

/**
 * The id seeded for `ref` among the entities of `kind`; a ref the fixture does not define is an
 * error naming where it was used. No ref (an optional one left out) is no id.
 */
export function refOf(map: RefMap | undefined, kind: string, ref: string, where: string): number;
export function refOf(map: RefMap | undefined, kind: string, ref: string | undefined, where: string): number | undefined;
export function refOf(map: RefMap | undefined, kind: string, ref: string | undefined, where: string): number | undefined {
  if (ref === undefined) return undefined;
  const id = map?.[ref];
  if (id === undefined) throw new Error(`${where}: no existe ${kind} con ref "${ref}"`);
  return id;
}
