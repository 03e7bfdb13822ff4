import { z } from 'zod';
import {
  AppError,
  EXPORT_CONTENT_TYPE,
  ExportCreateBody,
  Exportacion,
  ExportsListQuery,
  IdParam,
  MAX_EXPORTACIONES_EN_CURSO,
  exportsSubjects,
} from '@erp/contracts';
import { readObjectFrom } from '@erp/bus';
import { defineRoute } from '../route';

const RECURSOS = '`sales` (líneas como `GET /sales/{id}`), `returns` (como `GET /returns/{id}`) o `inventory` (como `GET /inventory/{id}`)';

export const exportsRoutes = [
  defineRoute({
    method: 'post',
    path: '/exports',
    summary: 'Exporta un recurso completo (o filtrado) a un archivo NDJSON comprimido, desde una sola instantánea',
    description: [
      `- \`recurso\`: ${RECURSOS}. \`filtros\`: los filtros de la lista de ese recurso (\`updated_since\` incluido) como valores JSON; uno desconocido es 422.`,
      '- Responde 202 con la exportación `en_cola`; `GET /exports/{id}` (o el evento `export.completed`) dice cuándo está `completada`, con `objetos`, `bytes` y `descarga`.',
      '- El archivo tiene una línea por objeto, idéntica byte a byte al `data` de su GET, ordenadas por `id`; todas como estaban en un mismo instante.',
      '- `cursor` continúa la sincronización desde ese instante: `GET /{recurso}?order_by=updated_at&cursor=<cursor>` devuelve lo que cambió después (puede repetir algún objeto exportado, nunca omite un cambio).',
      `- Como mucho ${MAX_EXPORTACIONES_EN_CURSO} exportaciones \`en_cola\` o \`procesando\` por empresa: la siguiente es 409 hasta que termine o se cancele una.`,
      '- El archivo se guarda 7 días (`expira`).',
    ].join('\n'),
    body: ExportCreateBody,
    response: { kind: 'single', schema: Exportacion, statuses: { 202: 'Exportación en cola' } },
    errors: [409],
    handle: async ({ body }, { bus, ctx }) => {
      const exportacion = await bus.request(exportsSubjects, 'exports.create', body, ctx);
      return { status: 202, data: exportacion, location: `/exports/${exportacion.id}` };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/exports',
    summary: 'Las exportaciones de la empresa, de la más reciente a la más antigua, paginadas',
    query: ExportsListQuery,
    response: { kind: 'list', schema: Exportacion },
    handle: async ({ query }, { bus, ctx }) => {
      const page = await bus.request(exportsSubjects, 'exports.list', query, ctx);
      return { data: page.items, pagination: page.pagination, filters_applied: page.filters_applied };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/exports/:id',
    summary: 'Una exportación: su estado, y al completarse `objetos`, `bytes`, `descarga` y `cursor`',
    params: IdParam,
    response: { kind: 'single', schema: Exportacion },
    handle: async ({ params }, { bus, ctx }) => ({ data: await bus.request(exportsSubjects, 'exports.get', { id: params.id }, ctx) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/exports/:id',
    summary: 'Cancela una exportación en curso (queda `cancelada`) o elimina el archivo de una completada',
    params: IdParam,
    response: { kind: 'single', schema: Exportacion },
    handle: async ({ params }, { bus, ctx }) => ({ data: await bus.request(exportsSubjects, 'exports.cancel', { id: params.id }, ctx) }),
  }),
  defineRoute({
    method: 'get',
    path: '/exports/:id/download',
    summary: 'El archivo de una exportación completada: NDJSON comprimido con gzip',
    description: [
      `- \`Content-Type: ${EXPORT_CONTENT_TYPE}\`, sin \`Content-Encoding\`: los bytes son el archivo \`.ndjson.gz\` tal como se guardó (varios miembros gzip seguidos, que todo gunzip lee como un solo texto); descomprimido, una línea JSON por objeto.`,
      '- `Content-Length` es `bytes` de la exportación, conocido antes del primer byte.',
      '- `Range: bytes=<recibidos>-` sigue una descarga cortada: 206 con `Content-Range` y solo esos bytes. Un rango fuera del archivo, o varios rangos, es 416.',
      '- 409 mientras la exportación no está `completada`; 404 cuando el archivo expiró o se eliminó.',
    ].join('\n'),
    params: IdParam,
    response: {
      kind: 'file',
      contentType: EXPORT_CONTENT_TYPE,
      schema: z.string().meta({ format: 'binary' }),
      statuses: { 200: 'El archivo completo', 206: 'Los bytes del rango pedido' },
    },
    errors: [409, 416],
    handle: async ({ params }, { bus, ctx }) => {
      const { objeto, bytes } = await bus.request(exportsSubjects, 'exports.download', { id: params.id }, ctx);
      return {
        file: {
          size: bytes,
          contentType: EXPORT_CONTENT_TYPE,
          filename: `exportacion-${params.id}.ndjson.gz`,
          open: async (start, end) => {
            const body = await readObjectFrom(bus, objeto, start, end);
            if (!body)
              throw AppError.notFound('exportacion_no_encontrada', 'El archivo de la exportación ya no existe (expiró o se eliminó)');
            return body;
          },
        },
      };
    },
  }),
];
