import type { CompiledQuery, Kysely } from 'kysely';

/** A query whose compiled form is wanted (a Kysely builder, or a raw `sql` template). */
interface Compilable<R> {
  compile(): CompiledQuery<R>;
}

/**
 * A statement whose shape never depends on its arguments, built and compiled once per database
 * handle instead of on every call: `build` runs once with stand-ins for the arguments, and each
 * call executes the compiled SQL with its own arguments put where the stand-ins were. For hot
 * reads, where building and compiling the query costs more CPU than Node spends on its result.
 * `build` must pass each argument as a value (a parameter), never as SQL text or an identifier.
 */
export function compiledOnce<DB, A extends readonly unknown[], R>(build: (db: Kysely<DB>, ...args: A) => Compilable<R>): (db: Kysely<DB>, ...args: A) => Promise<R[]> {
  const compiled = new WeakMap<Kysely<DB>, { query: CompiledQuery<R>; slots: number[] }>();
  return async (db, ...args) => {
    let entry = compiled.get(db);
    if (!entry) {
      const standIns = args.map((_, i) => Symbol(`argument ${i}`));
      const query = build(db, ...(standIns as unknown as A)).compile();
      entry = { query, slots: query.parameters.map((p) => standIns.indexOf(p as symbol)) };
      compiled.set(db, entry);
    }
    const { query, slots } = entry;
    const parameters = query.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    return (await db.executeQuery<R>({ ...query, parameters })).rows;
  };
}
