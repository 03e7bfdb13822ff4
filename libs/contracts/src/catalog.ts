import type { z } from 'zod';
import type { ErrorCode } from './errors';

/** One request/reply subject: the request it accepts, the reply it gives, the error codes it may answer with. */
export interface SubjectSpec<Req extends z.ZodType = z.ZodType, Rep extends z.ZodType = z.ZodType> {
  readonly request: Req;
  readonly reply: Rep;
  readonly errors: readonly ErrorCode[];
  /** When true, the handler receives a context that must carry a company. */
  readonly tenant: boolean;
  /**
   * When true, the handler may answer JSON text instead of values (the whole reply, or a page's
   * `items`), built in the exact form `reply` gives: reads whose rows Postgres serialises.
   */
  readonly json?: boolean;
}

export type Catalog = Record<string, SubjectSpec>;

/** One event on the JetStream stream. */
export interface EventSpec<P extends z.ZodType = z.ZodType> {
  readonly payload: P;
}

export type EventCatalog = Record<string, EventSpec>;

export type RequestOf<C extends Catalog, S extends keyof C> = z.input<C[S]['request']>;
export type ParsedRequestOf<C extends Catalog, S extends keyof C> = z.output<C[S]['request']>;
export type ReplyOf<C extends Catalog, S extends keyof C> = z.output<C[S]['reply']>;
export type ReplyInputOf<C extends Catalog, S extends keyof C> = z.input<C[S]['reply']>;
export type PayloadOf<E extends EventCatalog, S extends keyof E> = z.output<E[S]['payload']>;

/** Identity helper that checks a catalog literal while keeping its precise type. */
export function defineCatalog<C extends Catalog>(catalog: C): C {
  return catalog;
}

export function defineEvents<E extends EventCatalog>(events: E): E {
  return events;
}
