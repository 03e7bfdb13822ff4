import { copyRows, deferIndexes, nextId, syncIdentity } from '../copy';
import { missingTables, type Loader } from '../context';
import { cents } from '../money';
import { addDays, timestampAt } from '../time';
import { CARRIERS, FIRST_NAMES, LAST_NAMES, PACKAGINGS } from '../words';

const SCHEMA = 'packages';

/** Imported packages over two years, oldest first; each `wr` unique in its company, most linked to a seller. */
export const packagesLoader: Loader = {
  schema: SCHEMA,
  async missing(client) {
    const absent = await missingTables(client, SCHEMA, ['paquetes']);
    return absent.length > 0 ? `tables ${absent.join(', ')} do not exist` : undefined;
  },
  async load({ client, companies, random, progress, today }) {
    const rnd = random.fork(SCHEMA);
    const deferred = await deferIndexes(client, SCHEMA, ['paquetes']);
    let id = await nextId(client, SCHEMA, 'paquetes');
    const total = companies.reduce((n, c) => n + c.plan.packages, 0);
    const start = addDays(today, -730);
    function* rows() {
      for (const company of companies) {
        const sellers = company.usuarios.filter((u) => u.codigo !== null);
        const n = company.plan.packages;
        for (let i = 0; i < n; i++) {
          const day = addDays(start, Math.floor((i * 730) / Math.max(1, n)));
          const at = timestampAt(day, rnd.int(25_200, 68_400));
          const seller = sellers.length > 0 && rnd.chance(0.9) ? rnd.pick(sellers) : null;
          const peso = rnd.int(10, 50_000);
          const precio = rnd.int(500, 25_000);
          const terceros = rnd.chance(0.3) ? rnd.int(100, 5_000) : 0;
          const otros = rnd.chance(0.2) ? rnd.int(100, 2_000) : 0;
          const age = Math.floor(((n - i) * 730) / Math.max(1, n));
          yield [
            id++,
            company.empresaId,
            rnd.pick(company.sucursales).id,
            seller?.id ?? null,
            seller?.codigo ?? `X${rnd.int(100, 999)}`,
            `${rnd.pick(FIRST_NAMES)} ${rnd.pick(LAST_NAMES)}`,
            `WR${String(i + 1).padStart(9, '0')}`,
            `1Z${String(rnd.int(0, 999_999_999)).padStart(9, '0')}${String(i).padStart(7, '0')}`,
            rnd.pick(PACKAGINGS),
            rnd.int(1, 12),
            `${Math.floor(peso / 100)}.${String(peso % 100).padStart(2, '0')}00`,
            rnd.chance(0.5) ? `${rnd.int(0, 40)}.${String(rnd.int(0, 9999)).padStart(4, '0')}` : null,
            cents(precio),
            cents(terceros),
            cents(otros),
            cents(precio + terceros + otros),
            rnd.pick(CARRIERS),
            rnd.chance(0.5) ? `${rnd.pick(FIRST_NAMES)} ${rnd.pick(LAST_NAMES)}` : null,
            null,
            rnd.chance(0.7) ? `TRK${String(id).padStart(10, '0')}` : null,
            rnd.chance(0.1) ? 'Frágil, manipular con cuidado' : null,
            age > 30 ? 'Entregado' : age > 7 ? 'En tránsito' : 'En bodega',
            at,
            at,
          ];
        }
      }
    }
    const step = progress.step('packages.paquetes', total);
    const count = await copyRows(
      client,
      SCHEMA,
      'paquetes',
      [
        'id',
        'empresa_id',
        'sucursal_id',
        'usuario_id',
        'codigo_asesor',
        'cliente',
        'wr',
        'guia',
        'embalaje',
        'piezas',
        'peso',
        'volumen',
        'precio',
        'cuenta_a_terceros',
        'otros',
        'total',
        'transportista',
        'consignatario',
        'transportador',
        'seguimiento',
        'nota',
        'estado',
        'created_at',
        'updated_at',
      ],
      rows(),
      step,
    );
    await deferred.restore();
    step.done();
    await syncIdentity(client, SCHEMA, 'paquetes');
    return { 'packages.paquetes': count };
  },
};
