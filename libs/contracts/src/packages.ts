import { z } from 'zod';
import { defineCatalog, defineEvents } from './catalog';
import { Amount, BlankAsNullText, Id, NonEmptyText, RequiredText, missingOr } from './fields';

/** Items accepted by one `POST /packages/import`. */
export const MAX_PACKAGES_PER_IMPORT = 500;

/** Bounds that keep every amount inside its `numeric` column once rounded (money 14,2; measures 14,4). */
const MAX_MONEY = 999_999_999_999;
const MAX_MEASURE = 999_999_999;
const MAX_TEXT = 255;
const MAX_NOTE = 2000;

const amount = (max: number) => Amount({ min: 0, max });

/**
 * One item of a package import, validated on its own: an invalid item is reported with its
 * index and does not stop the others. Text is trimmed, except `codigo_asesor`, stored as sent.
 */
export const PackageImportItem = z
  .strictObject(
    {
      cliente: RequiredText(MAX_TEXT),
      codigo_asesor: z
        .string({ error: missingOr('Debe ser texto') })
        .max(MAX_TEXT, `Debe tener como máximo ${MAX_TEXT} caracteres`)
        .refine((v) => v.trim().length > 0, 'Es obligatorio'),
      wr: RequiredText(MAX_TEXT),
      guia: RequiredText(MAX_TEXT),
      embalaje: RequiredText(MAX_TEXT),
      piezas: z
        .number({ error: missingOr('Debe ser un número entero') })
        .int('Debe ser un número entero')
        .min(0, 'Debe ser mayor o igual a 0')
        .max(1_000_000, 'Debe ser menor o igual a 1000000'),
      peso: amount(MAX_MEASURE),
      precio: amount(MAX_MONEY),
      cuenta_a_terceros: amount(MAX_MONEY),
      otros: amount(MAX_MONEY),
      total: amount(MAX_MONEY),
      id_sucursal: Id.nullish(),
      sucursal: NonEmptyText(MAX_TEXT).nullish(),
      transportista: BlankAsNullText(MAX_TEXT),
      consignatario: BlankAsNullText(MAX_TEXT),
      transportador: BlankAsNullText(MAX_TEXT),
      seguimiento: BlankAsNullText(MAX_TEXT),
      volumen: z
        .number({ error: 'Debe ser un número' })
        .min(0, 'Debe ser mayor o igual a 0')
        .max(MAX_MEASURE, `Debe ser menor o igual a ${MAX_MEASURE}`)
        .nullish()
        .transform((v) => v ?? null),
      nota: BlankAsNullText(MAX_NOTE),
    },
    { error: 'El paquete debe ser un objeto JSON' },
  )
  // Checked even when other fields fail, so one message lists every problem of the item.
  .refine((item) => item.id_sucursal != null || item.sucursal != null, {
    message: 'Debe indicar id_sucursal o sucursal',
    path: [],
    when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
  })
  .meta({
    anyOf: [
      { required: ['id_sucursal'], properties: { id_sucursal: { type: 'integer' } } },
      { required: ['sucursal'], properties: { sucursal: { type: 'string' } } },
    ],
    description: 'Lleva `id_sucursal` o `sucursal` (nombre de una sucursal activa, sin distinguir mayúsculas).',
  });
export type PackageImportItem = z.output<typeof PackageImportItem>;

/**
 * The request as a whole: only its shape is checked here (HTTP 400 when it is wrong); the
 * items are validated one by one by the packages service.
 */
export const PackagesImportBody = z.strictObject(
  {
    packages: z
      .array(z.unknown(), { error: missingOr('Debe ser una lista de paquetes') })
      .min(1, 'Debe incluir al menos 1 paquete')
      .max(MAX_PACKAGES_PER_IMPORT, `Debe incluir como máximo ${MAX_PACKAGES_PER_IMPORT} paquetes`),
  },
  { error: 'El cuerpo debe ser un objeto JSON con la lista "packages"' },
);

export const PackageImportError = z.object({ index: z.number().int(), wr: z.string(), message: z.string() });
export type PackageImportError = z.infer<typeof PackageImportError>;

export const PackageImportOutcome = z.object({
  index: z.number().int(),
  wr: z.string(),
  status: z.enum(['created', 'skipped']),
  id: z.number().int(),
});
export type PackageImportOutcome = z.infer<typeof PackageImportOutcome>;

export const PackagesImportReply = z.object({
  created: z.number().int(),
  skipped: z.number().int(),
  /** Refused items, by index. */
  errors: z.array(PackageImportError),
  /** Created and skipped items, by index, with the package id (the existing one when skipped). */
  items: z.array(PackageImportOutcome),
});
export type PackagesImportReply = z.infer<typeof PackagesImportReply>;

export const packagesSubjects = defineCatalog({
  'packages.import': {
    tenant: true,
    errors: [],
    request: PackagesImportBody,
    reply: PackagesImportReply,
  },
});

export const packagesEvents = defineEvents({
  /** One event per import that created packages, listing them. */
  'events.packages.package.imported': {
    payload: z.object({
      empresa_id: z.number().int(),
      paquetes: z.array(z.object({ id: z.number().int(), wr: z.string(), id_sucursal: z.number().int() })),
    }),
  },
});
