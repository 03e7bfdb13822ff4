import { z } from 'zod';
import { defineCatalog, defineEvents } from './catalog';
import { DateRangeEnd, DateString, MAX_ID } from './fields';
import { PageRequest, Timestamp, pageReply, queryInt } from './http';
import { TIPOS_PRODUCTO } from './inventory';
import { ESTADOS_VENTA } from './sales';

/** What can be exported: the lists of the API, each written by the service that owns it. */
export const RECURSOS_EXPORTACION = ['sales', 'returns', 'inventory'] as const;
export type RecursoExportacion = (typeof RECURSOS_EXPORTACION)[number];

/** `en_cola` → `procesando` → `completada` | `fallida`; `cancelada` by DELETE at any point. */
export const ESTADOS_EXPORTACION = ['en_cola', 'procesando', 'completada', 'fallida', 'cancelada'] as const;
export type EstadoExportacion = (typeof ESTADOS_EXPORTACION)[number];

/** Exports of one company that may be `en_cola` or `procesando` at once; the next is refused with 409. */
export const MAX_EXPORTACIONES_EN_CURSO = 5;

/**
 * Media type of a download: the gzip file as stored (NDJSON inside, one object per line), sent
 * without `Content-Encoding`, so `Range` counts bytes of the file itself and a client that
 * decodes transfers by itself does not gunzip half a file.
 */
export const EXPORT_CONTENT_TYPE = 'application/gzip';

const UpdatedSince = z.iso
  .datetime({ offset: true, message: 'Debe ser una fecha y hora ISO 8601 (por ejemplo 2026-01-31T12:00:00Z)' })
  .optional();
const dateOrder = (v: { fecha_inicio?: string | undefined; fecha_fin?: string | undefined }) =>
  !v.fecha_inicio || !v.fecha_fin || v.fecha_fin >= v.fecha_inicio;
const DATE_ORDER_ISSUE = { message: 'No puede ser anterior a fecha_inicio', path: ['fecha_fin'] };
const FilterText = z.string().trim().min(1, 'No puede estar vacío').max(100, 'No puede tener más de 100 caracteres').optional();

/** The filters of `GET /sales` (typed values, not query text); an unknown one is refused by name. */
export const SalesExportFilters = z
  .strictObject({
    fecha_inicio: DateString.optional(),
    fecha_fin: DateRangeEnd.optional(),
    estado: z.enum(ESTADOS_VENTA, { message: `Debe ser uno de: ${ESTADOS_VENTA.join(', ')}` }).optional(),
    updated_since: UpdatedSince,
  })
  .refine(dateOrder, DATE_ORDER_ISSUE);
export type SalesExportFilters = z.output<typeof SalesExportFilters>;

/** The filters of `GET /returns`. */
export const ReturnsExportFilters = z
  .strictObject({
    fecha_inicio: DateString.optional(),
    fecha_fin: DateRangeEnd.optional(),
    id_venta: z.number().int().min(1).max(MAX_ID).optional(),
    updated_since: UpdatedSince,
  })
  .refine(dateOrder, DATE_ORDER_ISSUE);
export type ReturnsExportFilters = z.output<typeof ReturnsExportFilters>;

/** The filters of `GET /inventory`. */
export const InventoryExportFilters = z.strictObject({
  codigo: FilterText,
  nombre: FilterText,
  categoria: FilterText,
  marca: FilterText,
  tipo: z.enum(TIPOS_PRODUCTO, { message: 'Debe ser Producto o Servicio' }).optional(),
  enable: z.union([z.literal(0), z.literal(1)], { message: 'Debe ser 1 o 0' }).optional(),
  con_stock: z.boolean({ message: 'Debe ser true o false' }).optional(),
  stock_minimo: z.boolean({ message: 'Debe ser true o false' }).optional(),
  updated_since: UpdatedSince,
});
export type InventoryExportFilters = z.output<typeof InventoryExportFilters>;

/** Body of `POST /exports`: the resource and the filters of its list (`{}` or omitted: everything). */
export const ExportCreateBody = z.discriminatedUnion(
  'recurso',
  [
    z.strictObject({ recurso: z.literal('sales'), filtros: SalesExportFilters.default({}) }),
    z.strictObject({ recurso: z.literal('returns'), filtros: ReturnsExportFilters.default({}) }),
    z.strictObject({ recurso: z.literal('inventory'), filtros: InventoryExportFilters.default({}) }),
  ],
  { message: `recurso debe ser uno de: ${RECURSOS_EXPORTACION.join(', ')}` },
);
export type ExportCreateBody = z.output<typeof ExportCreateBody>;

/** An export as every exports endpoint answers it. */
export const Exportacion = z.object({
  id: z.number().int(),
  recurso: z.enum(RECURSOS_EXPORTACION),
  filtros: z.record(z.string(), z.unknown()),
  estado: z.enum(ESTADOS_EXPORTACION),
  /** Lines of the file; null until `completada`. */
  objetos: z.number().int().nullable(),
  /** Size of the file as downloaded (gzip); null until `completada`. */
  bytes: z.number().int().nullable(),
  created_at: Timestamp,
  /** When the export's snapshot was first being written. */
  iniciada: Timestamp.nullable(),
  completada: Timestamp.nullable(),
  /** When the file is removed (7 days after `completada`). */
  expira: Timestamp.nullable(),
  /** Why it failed, when `fallida`. */
  error: z.string().nullable(),
  /** Path of the file below the API base while it can be downloaded. */
  descarga: z.string().nullable(),
  /** `cursor` of `GET /{recurso}?order_by=updated_at`: what changed after the export's snapshot. */
  cursor: z.string().nullable(),
});
export type Exportacion = z.output<typeof Exportacion>;
export type ExportacionInput = z.input<typeof Exportacion>;

/** Query string of `GET /exports`: newest first. */
export const ExportsListQuery = z.object({
  page: queryInt({ min: 1, max: 1_000_000 }).default(1),
  per_page: queryInt({ min: 1, max: 200 }).default(20),
});

/** Where a completed export's file is and what it holds, for the gateway to stream it. */
export const ExportDownload = z.object({ objeto: z.string(), objetos: z.number().int(), bytes: z.number().int() });

/** Subjects of the exports service: the job records of the partner API's exports. */
export const exportsSubjects = defineCatalog({
  'exports.create': {
    request: ExportCreateBody,
    reply: Exportacion,
    errors: ['VALIDATION_FAILED', 'CONFLICT'],
    tenant: true,
  },
  'exports.get': { request: z.object({ id: z.number().int().min(1) }), reply: Exportacion, errors: ['NOT_FOUND'], tenant: true },
  'exports.list': { request: PageRequest, reply: pageReply(Exportacion), errors: [], tenant: true },
  'exports.cancel': { request: z.object({ id: z.number().int().min(1) }), reply: Exportacion, errors: ['NOT_FOUND'], tenant: true },
  'exports.download': {
    request: z.object({ id: z.number().int().min(1) }),
    reply: ExportDownload,
    errors: ['NOT_FOUND', 'CONFLICT'],
    tenant: true,
  },
});

/**
 * What an owning service is asked: write the file of an export (the rows of one snapshot, as the
 * JSON its GET answers, one per line, ordered by id, gzip) under `objeto` (`<writer>/<file>`) in
 * its own export store, and tell how many rows, how many bytes and the delta-sync cursor of the snapshot.
 */
function exportWriteSpec<F extends z.ZodType>(filters: F) {
  return {
    request: z.object({ exportacion_id: z.number().int().min(1), objeto: z.string().min(1).max(200), filtros: filters }),
    reply: z.object({ objetos: z.number().int(), bytes: z.number().int(), cursor: z.string() }),
    errors: ['VALIDATION_FAILED', 'UNAVAILABLE'] as const,
    tenant: true as const,
  };
}

/**
 * What an owning service is asked when a file it wrote is no longer wanted (expired, cancelled, or
 * left by an attempt that did not finish): remove `objeto` from its store. Only a writer may touch
 * its store's files, so the exports service, which decides when a file goes, asks it.
 */
const exportRemoveSpec = {
  request: z.object({ objeto: z.string().min(1).max(200) }),
  /** false: there was no such file (already removed, or never written). */
  reply: z.object({ removed: z.boolean() }),
  errors: ['VALIDATION_FAILED', 'UNAVAILABLE'] as const,
  tenant: false as const,
};

export const salesExportSubjects = defineCatalog({
  'sales.export.write': exportWriteSpec(SalesExportFilters),
  'sales.export.remove': exportRemoveSpec,
});
export const returnsExportSubjects = defineCatalog({
  'returns.export.write': exportWriteSpec(ReturnsExportFilters),
  'returns.export.remove': exportRemoveSpec,
});
export const inventoryExportSubjects = defineCatalog({
  'inventory.export.write': exportWriteSpec(InventoryExportFilters),
  'inventory.export.remove': exportRemoveSpec,
});

/** An export that ended, for the company's partner events. */
const ExportEnded = z.object({ empresa_id: z.number().int(), exportacion: Exportacion });

export const exportsEvents = defineEvents({
  'events.exports.export.completed': { payload: ExportEnded },
  'events.exports.export.failed': { payload: ExportEnded },
});
