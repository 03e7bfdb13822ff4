import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { SCOPES, SERVICES, databaseUrlOf, gatewaySubjects, isAppError, schemaOf, webhookSubjects, type Scope } from '@erp/contracts';
import { auditBooks, formatInvariants, seedFixture } from '@erp/back-office';
import { connectAdminBus } from './connect';
import { RETURNS_USAGE, returnsCommand } from './returns-command';

/** Where `npm start` keeps the databases unless DATABASE_URL says otherwise. */
const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/erp';

const USAGE = `Usage: npm run admin -- <command>

  seed FILE                       load a fixture (see shared fixture format); prints ids, keys and tokens as JSON
  empresas                        list companies with their active key count
  empresa activate|deactivate ID  switch a company on or off (its keys stop working within seconds)
  apikey create EMPRESA_ID [USUARIO_ID] [--alcances S,S…] [--nombre NOMBRE]
                                  create an API key (shown once), with every scope unless --alcances names them
                                  (recurso:nivel, e.g. sales:read,inventory:read)
  apikey revoke API_KEY_ID        revoke an API key (effective within seconds)
  webhooks failed [EMPRESA_ID]    list failed webhook deliveries with their reasons
  webhooks replay ID... | --empresa EMPRESA_ID
                                  process failed deliveries again (after fixing the catalog or the integration)
  webhooks rotate INTEGRACION_ID  issue a new webhook token (shown once; the old one stops working)
  webhooks reseal                 seal every shop credential again with the first key of PLATFORM_CREDENTIALS_KEYS
  drift [--integracion ID] [--repair] [--dias N]
                                  compare each shop's stock and its orders of the last N days (3) with ours,
                                  print the differences; --repair pushes the stock and reconciles the orders
                                  (exit 1 when a shop could not be checked, or a difference was found and not repaired)
  reconcile [--integracion ID]    one reconciliation pass now against the shop's API, of one integration or of
                                  every one with a shop API; prints what each pass read, stored and restored
${RETURNS_USAGE}
  audit [--empresa EMPRESA_ID] [--json]
                                  check the books' invariants on the live databases, read-only
                                  (exit 1 when one is violated)

Environment: NATS_URL (default nats://127.0.0.1:4222), SUBJECT_PREFIX (default erp), NATS_USER and NATS_PASSWORD (the admin identity, when NATS requires one), NATS_TLS_CA_FILE (TLS to NATS);
the audit reads DATABASE_URL (default postgres://postgres@127.0.0.1:5432/erp), and DATABASE_URL_<SCHEMA> (e.g. DATABASE_URL_SALES)
for a schema that lives in another database; a violation found across databases is reported only when a second look 5 s later finds it too.`;

const id = (value: string | undefined, what: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer`);
  return n;
};

async function main(args: string[]): Promise<unknown> {
  const [command, sub, a] = args;
  if (!command || command === 'help' || command === '--help') {
    console.log(USAGE);
    return undefined;
  }
  if (command === 'audit') return audit(args.slice(1));
  const bus = await connectAdminBus();
  const ctx = { requestId: `admin-${randomUUID()}` };
  try {
    switch (command) {
      case 'seed': {
        if (!sub) throw new Error('seed needs a FILE');
        const output = await seedFixture(bus, JSON.parse(await readFile(sub, 'utf8')));
        for (const [empresa, sections] of Object.entries(output.skipped)) {
          console.error(`note: ${empresa}: sections not loaded yet: ${sections.join(', ')}`);
        }
        return { empresas: output.empresas };
      }
      case 'empresas':
        return await bus.request(gatewaySubjects, 'gateway.admin.empresa.list', {}, ctx);
      case 'empresa':
        if (sub !== 'activate' && sub !== 'deactivate') throw new Error('empresa needs activate or deactivate');
        return await bus.request(
          gatewaySubjects,
          'gateway.admin.empresa.set-active',
          { empresa_id: id(a, 'ID'), activo: sub === 'activate' },
          ctx,
        );
      case 'apikey':
        if (sub === 'create') {
          const { values, positionals } = parseArgs({
            args: args.slice(2),
            options: { alcances: { type: 'string' }, nombre: { type: 'string' } },
            allowPositionals: true,
          });
          const [empresa, usuario] = positionals;
          const alcances = values.alcances?.split(',').map((s) => s.trim());
          const unknown = alcances?.filter((s) => !(SCOPES as readonly string[]).includes(s)) ?? [];
          if (unknown.length > 0) throw new Error(`Unknown scope(s) ${unknown.join(', ')}; the scopes are ${SCOPES.join(', ')}`);
          return await bus.request(
            gatewaySubjects,
            'gateway.admin.apikey.create',
            {
              empresa_id: id(empresa, 'EMPRESA_ID'),
              ...(usuario ? { usuario_id: id(usuario, 'USUARIO_ID') } : {}),
              ...(alcances ? { alcances: alcances as Scope[] } : {}),
              ...(values.nombre ? { nombre: values.nombre } : {}),
            },
            ctx,
          );
        }
        if (sub === 'revoke') return await bus.request(gatewaySubjects, 'gateway.admin.apikey.revoke', { id: id(a, 'API_KEY_ID') }, ctx);
        throw new Error('apikey needs create or revoke');
      case 'webhooks':
        if (sub === 'failed') {
          return await bus.request(
            webhookSubjects,
            'webhooks.admin.delivery.list',
            { estado: 'fallida', ...(a ? { empresa_id: id(a, 'EMPRESA_ID') } : {}) },
            ctx,
          );
        }
        if (sub === 'replay') {
          const rest = args.slice(2);
          if (rest[0] === '--empresa')
            return await bus.request(webhookSubjects, 'webhooks.admin.delivery.replay', { empresa_id: id(rest[1], 'EMPRESA_ID') }, ctx);
          if (rest.length === 0) throw new Error('webhooks replay needs delivery ids or --empresa EMPRESA_ID');
          return await bus.request(webhookSubjects, 'webhooks.admin.delivery.replay', { ids: rest.map((v) => id(v, 'ID')) }, ctx);
        }
        if (sub === 'rotate')
          return await bus.request(webhookSubjects, 'webhooks.admin.integration.rotate-token', { id: id(a, 'INTEGRACION_ID') }, ctx);
        if (sub === 'reseal') return await bus.request(webhookSubjects, 'webhooks.admin.credentials.reseal', {}, ctx);
        throw new Error('webhooks needs failed, replay, rotate or reseal');
      case 'drift': {
        const { values } = parseArgs({
          args: args.slice(1),
          options: { integracion: { type: 'string' }, repair: { type: 'boolean' }, dias: { type: 'string' } },
        });
        const request = {
          ...(values.integracion ? { id_integracion: id(values.integracion, 'INTEGRACION_ID') } : {}),
          reparar: values.repair === true,
          ...(values.dias ? { dias: id(values.dias, 'N') } : {}),
        };
        const found = await bus.request(webhookSubjects, 'webhooks.admin.drift', request, ctx, { timeoutMs: 10 * 60_000 });
        // A shop that could not be checked fails the run either way; a difference only when it was not repaired.
        const drifted = found.some((d) => d.stock_distinto.length > 0 || d.pedidos_pendientes.length > 0);
        if (found.some((d) => d.resultado === 'fallida') || (drifted && !request.reparar)) process.exitCode = 1;
        return found;
      }
      case 'reconcile': {
        const { values } = parseArgs({ args: args.slice(1), options: { integracion: { type: 'string' } } });
        const request = values.integracion ? { id_integracion: id(values.integracion, 'INTEGRACION_ID') } : {};
        // A pass waits on the shop's API: up to its call timeout for each page.
        return await bus.request(webhookSubjects, 'webhooks.admin.reconcile', request, ctx, { timeoutMs: 10 * 60_000 });
      }
      case 'returns':
        return await returnsCommand(bus, args.slice(1), ctx);
      default:
        throw new Error(`Unknown command "${command}"\n\n${USAGE}`);
    }
  } finally {
    await bus.drain();
  }
}

/** `audit [--empresa N] [--json]`: prints each invariant with the items checked and its violations; exit code 1 on a violation. */
async function audit(args: string[]): Promise<undefined> {
  let empresaId: number | undefined;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--json') json = true;
    else if (args[i] === '--empresa') empresaId = id(args[++i], 'EMPRESA_ID');
    else throw new Error(`audit takes --empresa EMPRESA_ID and --json, not "${args[i]}"`);
  }
  const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const results = await auditBooks({
    databaseUrl,
    databaseUrls: Object.fromEntries(SERVICES.map((name) => [schemaOf(name), databaseUrlOf(name, process.env, databaseUrl)])),
    ...(empresaId !== undefined ? { empresaId } : {}),
  });
  const violated = results.some((r) => r.violations.length > 0);
  console.log(json ? JSON.stringify({ ok: !violated, invariants: results }, null, 2) : formatInvariants(results, 50));
  if (violated) process.exitCode = 1;
  return undefined;
}

main(process.argv.slice(2)).then(
  (result) => {
    if (result !== undefined) console.log(JSON.stringify(result, null, 2));
  },
  (err: unknown) => {
    if (isAppError(err)) {
      console.error(`${err.code}: ${err.message}${err.details ? `\n${JSON.stringify(err.details, null, 2)}` : ''}`);
    } else console.error((err as Error).message);
    process.exit(1);
  },
);
