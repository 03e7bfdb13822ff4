export * from './pool';
export * from './errors';
export * from './transaction';
export * from './migrate';
export * from './json';
export * from './compiled';
export * from './like';
export { sql, type Kysely, type Transaction, type Generated, type ColumnType, type Selectable, type Insertable } from 'kysely';
export * from './roles';
