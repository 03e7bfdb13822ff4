import { z } from 'zod';
import { MAX_PACKAGES_PER_IMPORT, PackageImportItem, PackagesImportBody, PackagesImportReply, packagesSubjects } from '@erp/contracts';
import { defineRoute } from '../route';

export const packagesRoutes = [
  defineRoute({
    method: 'post',
    path: '/packages/import',
    summary: 'Importa de 1 a 500 paquetes: cada uno se crea, se omite (wr ya existente) o se rechaza por separado',
    description: [
      'Un cuerpo que no es `{packages: [...]}` con 1 a 500 elementos, o que lleva otros campos, responde 400 con `details`.',
      'Un campo desconocido en un paquete lo rechaza: su mensaje en `errors` lo nombra («campo: Campo desconocido»).',
      'Cada paquete se valida por separado: los inválidos se informan en `errors` con su índice y no detienen a los demás.',
      'Cada paquete lleva `id_sucursal` o `sucursal` (nombre de una sucursal activa, sin distinguir mayúsculas).',
      'Un `wr` que ya existe en la empresa (o repetido en el mismo lote) se omite: `status` `skipped` con el id del paquete existente.',
      'Los creados quedan en estado `En bodega`.',
    ].join('\n'),
    body: PackagesImportBody,
    // The spec answers 400 for a body that is not `{packages: [1..500]}`; item problems are per item.
    bodyErrorStatus: 400,
    documentedBody: z.strictObject({ packages: z.array(PackageImportItem).min(1).max(MAX_PACKAGES_PER_IMPORT) }),
    response: { kind: 'raw', schema: z.object({ success: z.literal(true), ...PackagesImportReply.shape }) },
    handle: async ({ body }, { bus, ctx }) => {
      const reply = await bus.request(packagesSubjects, 'packages.import', { packages: body.packages }, ctx);
      // The spec gives this endpoint its own body instead of the `data` envelope.
      return { raw: { success: true, ...reply } };
    },
  }),
];
