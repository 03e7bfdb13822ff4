import { PackagesImportBody, packagesSubjects } from '@erp/contracts';
import { defineRoute } from '../route';

export const packagesRoutes = [
  defineRoute({
    method: 'post',
    path: '/packages/import',
    summary: 'Importa de 1 a 500 paquetes: cada uno se crea, se omite (wr ya existente) o se rechaza por separado',
    body: PackagesImportBody,
    // The spec answers 400 for a body that is not `{packages: [1..500]}`; item problems are per item.
    bodyErrorStatus: 400,
    handle: async ({ body }, { bus, ctx }) => {
      const reply = await bus.request(packagesSubjects, 'packages.import', { packages: body.packages }, ctx);
      // The spec gives this endpoint its own body instead of the `data` envelope.
      return { raw: { success: true, ...reply } };
    },
  }),
];
