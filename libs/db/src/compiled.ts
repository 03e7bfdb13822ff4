import type { CompiledQuery, Kysely } from 'kysely';

/** A query whose compiled form is wanted (a Kysely builder, or a raw `sql` template). */
interface Compilable<R> {
  compile(): CompiledQuery<R>;
}

interface Compiled<R> {
  query: CompiledQuery<R>;
  /** For each parameter of the query, the argument it stands for (-1: a constant of the statement). */
  slots: number[];
}

/**
 * A statement whose shape never depends on its arguments, built and compiled once per database
 * handle instead of on every call: `build` runs once with stand-ins for the arguments, and each
 * call executes the compiled SQL with its own arguments put where the stand-ins were. For hot
 * reads, where building and compiling the query costs more CPU than Node spends on its result.
 * `build` must pass each argument as a value (a parameter), never as SQL text or an identifier,
 * and must not look at it.
 */
export function compiledOnce<DB, A extends readonly unknown[], R>(
  build: (db: Kysely<DB>, ...args: A) => Compilable<R>,
): (db: Kysely<DB>, ...args: A) => Promise<R[]> {
  const perShape = compiledPerShape((db: Kysely<DB>, _shape: '', ...args: A) => build(db, ...args));
  return (db, ...args) => perShape(db, '', ...args);
}

/**
 * `compiledOnce` for a statement with a few shapes (which filters are present, the order): the
 * `shape` (plain data: booleans, names) is given to `build` as it is and picks the compiled
 * statement; the arguments are stand-ins as in `compiledOnce`.
 */
export function compiledPerShape<DB, S, A extends readonly unknown[], R>(
  build: (db: Kysely<DB>, shape: S, ...args: A) => Compilable<R>,
): (db: Kysely<DB>, shape: S, ...args: A) => Promise<R[]> {
  const compiled = new WeakMap<Kysely<DB>, Map<string, Compiled<R>>>();
  return async (db, shape, ...args) => {
    let shapes = compiled.get(db);
    if (!shapes) compiled.set(db, (shapes = new Map()));
    const key = JSON.stringify(shape);
    let entry = shapes.get(key);
    if (!entry) {
      const standIns = args.map((_, i) => Symbol(`argument ${i}`));
      const query = build(db, shape, ...(standIns as unknown as A)).compile();
      entry = { query, slots: query.parameters.map((p) => standIns.indexOf(p as symbol)) };
      shapes.set(key, entry);
    }
    const { query, slots } = entry;
    const parameters = query.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    return (await db.executeQuery<R>({ ...query, parameters })).rows;
  };
}

/**
 * Which of `keys` a request has, not their values: with what else picks the SQL (the order), the
 * `shape` of a `compiledPerShape` statement that filters on them.
 */
export function filterShape<K extends string>(request: { readonly [P in K]?: unknown }, keys: readonly K[]): Record<K, boolean> {
  return Object.fromEntries(keys.map((key) => [key, request[key] !== undefined])) as Record<K, boolean>;
}

/**
 * The filters that `shape` says a request has, with the values given: in a `compiledPerShape`
 * builder, the stand-ins of its arguments, so the statement of a shape filters on exactly its filters.
 */
export function shapedFilters<F extends Record<string, unknown>>(shape: { readonly [K in keyof F]: boolean }, values: F): Partial<F> {
  return Object.fromEntries(Object.entries(values).filter(([key]) => shape[key])) as Partial<F>;
}
