import { z } from 'zod';
import { documentAs } from './http';

/**
 * The field rules every contract shares, with the one set of messages the API answers with
 * (Spanish, as the partner reads them in `details`).
 */

/** Largest id Postgres `integer` keeps. */
export const MAX_ID = 2_147_483_647;

/** The message of a value that is absent (undefined or null), or else `wrongType`. */
export const missingOr = (wrongType: string) => (issue: { input?: unknown }) =>
  issue.input === undefined || issue.input === null ? 'Es obligatorio' : wrongType;

/** A row id: a positive integer that fits Postgres `integer`. */
export const Id = z
  .number({ error: missingOr('Debe ser un número entero') })
  .int('Debe ser un número entero')
  .positive('Debe ser mayor que 0')
  .max(MAX_ID, 'No es un id válido');

/** Decimal places of a JSON number as written in its shortest form (exponent forms count as too many). */
export function decimalPlaces(value: number): number {
  const text = String(value);
  if (/e/i.test(text)) return /e-/i.test(text) ? Number.POSITIVE_INFINITY : 0;
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/**
 * An amount or a quantity as a JSON number within bounds. With `scale`, at most that many decimal
 * places (so it is stored exactly), documented as `multipleOf` 10^-scale; with `positive`, 0 is
 * refused too.
 */
export function Amount(options: { min: number; max: number; scale?: number; positive?: boolean }) {
  const { min, max, scale, positive } = options;
  const bounded = z
    .number({ error: missingOr('Debe ser un número') })
    .min(min, `Debe ser mayor o igual a ${min}`)
    .max(max, `Debe ser menor o igual a ${max}`)
    .refine((v) => !positive || v > 0, 'Debe ser mayor que 0');
  if (scale === undefined) return bounded;
  return bounded
    .refine((v) => decimalPlaces(v) <= scale, `Debe tener como máximo ${scale} decimales`)
    .meta({ multipleOf: Number(`1e-${scale}`) });
}

/** Money between services: an exact decimal string with at most two places. */
export const MoneyText = z.string().regex(/^-?\d{1,16}(\.\d{1,2})?$/, 'Debe ser un importe con hasta 2 decimales');

/**
 * An exact decimal between services: a JSON number or a decimal string in, a plain decimal
 * string out (never exponent notation), so no side ever does money or stock in binary floats.
 */
export const DecimalText = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const text = typeof v === 'number' ? String(v) : v.trim();
  if (!/^-?\d{1,15}(\.\d{1,12})?$/.test(text)) {
    ctx.addIssue({ code: 'custom', message: 'Debe ser un número decimal' });
    return z.NEVER;
  }
  return text;
});
export const PositiveQuantity = DecimalText.refine((v) => Number(v) > 0, 'Debe ser mayor que 0');
export const NonZeroQuantity = DecimalText.refine((v) => Number(v) !== 0, 'Debe ser distinto de 0');
export const NonNegativeDecimal = DecimalText.refine((v) => Number(v) >= 0, 'Debe ser mayor o igual a 0');

const maxText = (max: number) => `Debe tener como máximo ${max} caracteres`;

/** Text that must be there: absent, null or blank is `Es obligatorio`. Trimmed. */
export const RequiredText = (max = 255) =>
  z
    .string({ error: missingOr('Debe ser texto') })
    .trim()
    .min(1, 'Es obligatorio')
    .max(max, maxText(max));

/** Text that, when given, may not be blank. Trimmed. */
export const NonEmptyText = (max = 255) =>
  z
    .string({ error: missingOr('Debe ser texto') })
    .trim()
    .min(1, 'No puede estar vacío')
    .max(max, maxText(max));

/** Optional text where null or blank means "not given" (undefined). Trimmed. */
export const BlankAsAbsentText = (max: number) =>
  z
    .string({ error: 'Debe ser texto' })
    .trim()
    .max(max, maxText(max))
    .nullish()
    .transform((v) => (v ? v : undefined));

/** Optional text stored as null when absent or blank. Trimmed. */
export const BlankAsNullText = (max = 255) =>
  z
    .string({ error: 'Debe ser texto' })
    .trim()
    .max(max, maxText(max))
    .nullish()
    .transform((v) => (v ? v : null));

/** A change of an optional text column: absent leaves it, null clears it. Trimmed. */
export const ClearableText = (max: number) => z.string({ error: 'Debe ser texto' }).trim().max(max, maxText(max)).nullable().optional();

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * How a date is documented: JSON Schema's `date` format (a calendar date that exists), spelled out
 * as a pattern too, without the year 0000 (Postgres has none).
 */
export const DATE_JSON_SCHEMA = { type: 'string', format: 'date', pattern: '^(?!0000)\\d{4}-\\d{2}-\\d{2}$' } as const;

/** Whether `value` is a calendar date `YYYY-MM-DD` that exists, years 0001 to 9999 (2026-02-30 is not). */
export function isCalendarDate(value: string): boolean {
  const m = DATE_RE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Computed, not through Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return y >= 1 && days !== undefined && d >= 1 && d <= days;
}

const DATE_MESSAGE = 'Debe ser una fecha válida con formato Y-m-d (AAAA-MM-DD)';

/** A calendar date `YYYY-MM-DD` that exists (2026-02-30 is refused). */
export const DateString = documentAs(z.string().refine(isCalendarDate, DATE_MESSAGE), DATE_JSON_SCHEMA);

/** A date field of a body: as `DateString`, and `Es obligatorio` when absent or null. */
export const RequiredDate = documentAs(
  z.string({ error: missingOr('Debe ser una fecha con formato Y-m-d') }).refine(isCalendarDate, DATE_MESSAGE),
  DATE_JSON_SCHEMA,
);

/** `fecha_fin` of a date range, documented with the rule between the two dates that JSON Schema cannot say. */
export const DateRangeEnd = documentAs(DateString, { ...DATE_JSON_SCHEMA, description: 'Incluida. No puede ser anterior a fecha_inicio.' });
