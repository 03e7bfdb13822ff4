import { createHash } from 'node:crypto';
import { copyRows, nextId, syncIdentity, type CopyValue } from '../copy';
import { missingTables, type Loader, type LoadedUser } from '../context';
import { FIRST_NAMES, LAST_NAMES } from '../words';

const SCHEMA = 'gateway';

/** Companies, their users (an administrator, supervisors, sellers with advisor codes) and one API key each. */
export const gatewayLoader: Loader = {
  schema: SCHEMA,
  async missing(client) {
    const absent = await missingTables(client, SCHEMA, ['empresas', 'usuarios', 'api_keys']);
    return absent.length > 0 ? `tables ${absent.join(', ')} do not exist` : undefined;
  },
  async load({ client, companies, random }) {
    const rnd = random.fork(SCHEMA);
    let empresaId = await nextId(client, SCHEMA, 'empresas');
    let usuarioId = await nextId(client, SCHEMA, 'usuarios');
    let keyId = await nextId(client, SCHEMA, 'api_keys');
    const empresas: CopyValue[][] = [];
    const usuarios: CopyValue[][] = [];
    const keys: CopyValue[][] = [];
    for (const company of companies) {
      company.empresaId = empresaId++;
      empresas.push([company.empresaId, company.plan.clave, company.plan.nombre, true, true, company.iva.toFixed(2)]);
      company.usuarios = [];
      for (let i = 0; i < company.plan.users; i++) {
        const rol: LoadedUser['rol'] = i === 0 ? 'Administrador' : i <= 2 ? 'Supervisor' : 'Vendedor';
        const user: LoadedUser = {
          id: usuarioId++,
          nombre: `${rnd.pick(FIRST_NAMES)} ${rnd.pick(LAST_NAMES)}`,
          rol,
          codigo: rol === 'Vendedor' ? `A${String(i).padStart(3, '0')}` : null,
        };
        company.usuarios.push(user);
        usuarios.push([user.id, company.empresaId, user.nombre, user.rol, user.codigo, true]);
      }
      const hash = createHash('sha256').update(company.plan.apiKey, 'utf8').digest();
      keys.push([keyId++, company.empresaId, null, `\\x${hash.toString('hex')}`, company.plan.apiKey.slice(0, 12), true]);
    }
    const counts = {
      'gateway.empresas': await copyRows(
        client,
        SCHEMA,
        'empresas',
        ['id', 'clave', 'nombre', 'activo', 'vender_sin_stock', 'iva'],
        empresas,
      ),
      'gateway.usuarios': await copyRows(client, SCHEMA, 'usuarios', ['id', 'empresa_id', 'nombre', 'rol', 'codigo', 'activo'], usuarios),
      'gateway.api_keys': await copyRows(
        client,
        SCHEMA,
        'api_keys',
        ['id', 'empresa_id', 'usuario_id', 'key_hash', 'prefix', 'activo'],
        keys,
      ),
    };
    for (const table of ['empresas', 'usuarios', 'api_keys']) await syncIdentity(client, SCHEMA, table);
    return counts;
  },
};
