import { createHash } from 'node:crypto';

/** The benchmark's own database (never the development one: the generator drops and recreates it). */
export function benchDatabaseUrl(): string {
  return process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/erp_bench';
}

/**
 * The database of each schema the benchmark keeps apart: `BENCH_DATABASE_URL_<SCHEMA>` (e.g.
 * `BENCH_DATABASE_URL_SALES`), as `DATABASE_URL_<SCHEMA>` places a schema for the services. Only
 * `npm run bench:data` reads them; `npm run bench` runs on one database.
 */
export function benchDatabaseUrls(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const schema = /^BENCH_DATABASE_URL_([A-Z][A-Z0-9_]*)$/.exec(name)?.[1];
    if (schema && value) urls[schema.toLowerCase()] = value;
  }
  return urls;
}

/** What `npm run bench:data` loads, in rows of the large company; the two smaller ones scale from it. */
export interface Scale {
  /** Sales of the large company (3 lines each). */
  sales: number;
  /** Products of the large company. */
  products: number;
  /** Warehouses of the large company; every product has stock in each. */
  warehouses: number;
  /** Returns of the large company (default: a tenth of the sales). */
  returns: number;
  /** Packages of the large company (default: a fifth of the sales). */
  packages: number;
}

export const DEFAULT_SCALE: Scale = { sales: 100_000, products: 100_000, warehouses: 5, returns: 10_000, packages: 20_000 };

export interface CompanyPlan {
  /** Stable name, also the company's `clave` (as the fixture loader records it). */
  clave: string;
  nombre: string;
  /** The company's API key in clear; only its SHA-256 is stored. */
  apiKey: string;
  branches: number;
  warehouses: number;
  products: number;
  users: number;
  customers: number;
  sales: number;
  returns: number;
  packages: number;
}

/** Bench keys are fixed so the harness can call the API without a seeding step; this database is never production. */
export function benchApiKey(clave: string): string {
  return `erp_${clave}_${createHash('sha256').update(`erp-bench:${clave}`).digest('hex').slice(0, 32)}`;
}

function scaled(n: number, divisor: number, min: number): number {
  return Math.max(min, Math.round(n / divisor));
}

/** The large company at full scale beside a medium one (1/20) and a small one (1/100). */
export function companyPlans(scale: Scale): CompanyPlan[] {
  const large: CompanyPlan = {
    clave: 'bench-grande',
    nombre: 'Distribuidora Centroamericana, S.A. de C.V.',
    apiKey: benchApiKey('bench-grande'),
    branches: Math.max(1, Math.ceil(scale.warehouses / 2)),
    warehouses: scale.warehouses,
    products: scale.products,
    users: 30,
    customers: scaled(scale.sales, 100, 20),
    sales: scale.sales,
    returns: scale.returns,
    packages: scale.packages,
  };
  const smaller = (clave: string, nombre: string, divisor: number, warehouses: number): CompanyPlan => ({
    clave,
    nombre,
    apiKey: benchApiKey(clave),
    branches: 1,
    warehouses,
    products: scaled(scale.products, divisor, 10),
    users: 6,
    customers: scaled(scale.sales, 100 * divisor, 5),
    sales: scaled(scale.sales, divisor, 2),
    returns: scaled(scale.returns, divisor, 0),
    packages: scaled(scale.packages, divisor, 2),
  });
  return [large, smaller('bench-mediana', 'Ferretería El Volcán', 20, 3), smaller('bench-pequena', 'Tienda La Esquina', 100, 2)];
}

/** Parses `--sales N --products N --warehouses N --returns N --packages N --seed N` (also `--sales=N`). */
export function parseScale(argv: readonly string[]): { scale: Scale; seed: number; rest: Record<string, string> } {
  const values: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [key, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`--${key} needs a value`);
    values[key] = value;
  }
  const int = (key: string, fallback: number, min: number): number => {
    const raw = values[key];
    delete values[key];
    if (raw === undefined) return fallback;
    const n = Number(raw.replace(/_/g, ''));
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${key} must be an integer ≥ ${min}`);
    return n;
  };
  const sales = int('sales', DEFAULT_SCALE.sales, 1);
  const scale: Scale = {
    sales,
    products: int('products', DEFAULT_SCALE.products, 10),
    warehouses: int('warehouses', DEFAULT_SCALE.warehouses, 1),
    returns: int('returns', Math.round(sales / 10), 0),
    packages: int('packages', Math.round(sales / 5), 0),
  };
  const seed = int('seed', 20_260_101, 0);
  return { scale, seed, rest: values };
}
