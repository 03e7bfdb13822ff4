import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { BUS_IDENTITIES, SERVICES, streamOfSubject } from '@erp/contracts';
import { natsPermissions } from './permissions';
import { deployNatsAuthText } from './write-nats-auth';

describe('NATS permissions generated from the subject catalogs', () => {
  const sut = natsPermissions('erp');

  it('lets no service identity call an admin subject, and the admin identity call every served subject', () => {
    for (const service of SERVICES) {
      expect({ service, admin: sut[service]!.publish.allow.filter((s) => /^erp\.[^.]+\.admin\./.test(s)) }).toEqual({ service, admin: [] });
    }
    const served = SERVICES.flatMap((service) => BUS_IDENTITIES[service].serves.flatMap((catalog) => Object.keys(catalog))).map(
      (s) => `erp.${s}`,
    );
    expect(sut.admin!.publish.allow).toEqual([...new Set(served)].sort());
  });

  it('is what deploy/k8s/nats-auth.conf holds (run `npm run nats:auth` after changing a catalog)', () => {
    const committed = readFileSync(path.resolve(__dirname, '../../../deploy/k8s/nats-auth.conf'), 'utf8');
    expect(committed).toBe(deployNatsAuthText());
  });

  it('grants each service exactly the subjects its code requests, no catalog wholesale', () => {
    for (const service of SERVICES) {
      const requested = requestsInCode(service);
      expect({ service, calls: [...new Set(BUS_IDENTITIES[service].calls)].sort() }).toEqual({ service, calls: requested });
      const granted = sut[service]!.publish.allow.filter((s) => !s.startsWith('$') && !/^erp\.(events|intake)\./.test(s));
      expect({ service, granted }).toEqual({ service, granted: requested.map((s) => `erp.${s}`) });
    }
    expect(sut.gateway!.publish.allow).not.toContain('erp.inventory.stock.adjust');
  });

  it('lets no service create, change, purge or delete a stream or a consumer; the operator identity creates them and changes none', () => {
    // The export stores' files are read by direct (or message) get, on those streams only.
    const readsExportFiles = /^\$JS\.API\.(DIRECT\.GET|STREAM\.MSG\.GET)\.OBJ_erp_EXPORTS_(sales|returns|inventory)(\.>)?$/;
    for (const service of SERVICES) {
      const jetstream = sut[service]!.publish.allow.filter((s) => s.startsWith('$JS.API.'));
      expect({
        service,
        managing: jetstream.filter(
          (s) => !/^\$JS\.API\.(INFO|STREAM\.INFO\.|CONSUMER\.(INFO|MSG\.NEXT)\.)/.test(s) && !readsExportFiles.test(s),
        ),
      }).toEqual({ service, managing: [] });
    }
    const stores = ['OBJ_erp_EXPORTS_sales', 'OBJ_erp_EXPORTS_returns', 'OBJ_erp_EXPORTS_inventory'];
    expect(sut.operator!.publish.allow.filter((s) => s.startsWith('$JS.API.STREAM.') || s === '$JS.API.INFO').sort()).toEqual(
      [
        '$JS.API.INFO',
        ...['erp_EVENTS', 'erp_INTAKE', ...stores].flatMap((stream) => [
          `$JS.API.STREAM.CREATE.${stream}`,
          `$JS.API.STREAM.INFO.${stream}`,
        ]),
      ].sort(),
    );
    expect(sut.operator!.publish.allow.filter((s) => !s.startsWith('$JS.API.'))).toEqual([]);
  });

  it('gives each writer its own export store and no purge; the gateway reads every store; the exports service reads their limits only', () => {
    const exportGrants = (identity: string) => sut[identity]!.publish.allow.filter((s) => /EXPORTS/.test(s));
    const read = (writer: string) => [
      `$JS.API.DIRECT.GET.OBJ_erp_EXPORTS_${writer}`,
      `$JS.API.DIRECT.GET.OBJ_erp_EXPORTS_${writer}.>`,
      `$JS.API.STREAM.INFO.OBJ_erp_EXPORTS_${writer}`,
      `$JS.API.STREAM.MSG.GET.OBJ_erp_EXPORTS_${writer}`,
    ];
    for (const writer of ['sales', 'returns', 'inventory']) {
      expect(exportGrants(writer)).toEqual([...read(writer), `$O.erp_EXPORTS_${writer}.C.>`, `$O.erp_EXPORTS_${writer}.M.>`].sort());
    }
    expect(exportGrants('gateway')).toEqual(['sales', 'returns', 'inventory'].flatMap(read).sort());
    expect(exportGrants('exports')).toEqual(['inventory', 'returns', 'sales'].map((w) => `$JS.API.STREAM.INFO.OBJ_erp_EXPORTS_${w}`));
    for (const identity of Object.keys(sut))
      expect({ identity, purge: sut[identity]!.publish.allow.filter((s) => /PURGE|DELETE|UPDATE/.test(s)) }).toEqual({
        identity,
        purge: [],
      });
  });

  it('lets no service create or delete any consumer, on any stream, its own durables included', () => {
    const durables = SERVICES.flatMap((service) => Object.entries(BUS_IDENTITIES[service].consumers as Record<string, string>));
    const consumerApi = ['erp_EVENTS', 'erp_INTAKE', 'OBJ_erp_EXPORTS_sales', 'ANY_STREAM'].flatMap((stream) => [
      `$JS.API.CONSUMER.CREATE.${stream}`,
      `$JS.API.CONSUMER.CREATE.${stream}.pushed`,
      `$JS.API.CONSUMER.CREATE.${stream}.pushed.erp.sales.admin.annul`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.pushed`,
      `$JS.API.CONSUMER.DELETE.${stream}.pushed`,
      ...durables.flatMap(([durable, event]) => [
        `$JS.API.CONSUMER.CREATE.${stream}.${durable}.erp.${event}`,
        `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${durable}`,
        `$JS.API.CONSUMER.DELETE.${stream}.${durable}`,
      ]),
    ]);
    for (const service of SERVICES) {
      const granted = sut[service]!.publish.allow;
      expect({ service, reaches: consumerApi.filter((subject) => granted.some((pattern) => subjectMatches(pattern, subject))) }).toEqual({
        service,
        reaches: [],
      });
    }
    // The operator reaches exactly the creation of each declared durable, over its one event, on the stream that carries it.
    expect(consumerApi.filter((subject) => sut.operator!.publish.allow.some((pattern) => subjectMatches(pattern, subject))).sort()).toEqual(
      durables.map(([durable, event]) => `$JS.API.CONSUMER.CREATE.${streamOfSubject('erp', event)}.${durable}.erp.${event}`).sort(),
    );
    expect(consumerApi).toContain('$JS.API.CONSUMER.CREATE.erp_INTAKE.webhook-ingest-deliveries.erp.intake.webhooks.delivery.received');
  });
});

/** Whether a NATS subject pattern (`*` one token, `>` the rest) matches a subject, as nats-server's permissions do. */
function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length || (want[i] !== '*' && want[i] !== have[i])) return false;
  }
  return want.length === have.length;
}

const SERVICES_DIR = path.resolve(__dirname, '../../../services');
// `bus.request(catalog, 'subject', …)` and its JSON variants, however the call is wrapped over lines.
const REQUEST_CALL = /\bbus\.request\w*\(/g;
const LITERAL_REQUEST = /\bbus\.request\w*\(\s*\w+\s*,\s*'([^']+)'/g;

/** The subjects a service's source requests; a request whose subject is not a literal cannot be granted, so it fails. */
function requestsInCode(service: string): string[] {
  const subjects = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        const text = readFileSync(file, 'utf8');
        const literal = [...text.matchAll(LITERAL_REQUEST)].map((m) => m[1]!);
        const all = text.match(REQUEST_CALL)?.length ?? 0;
        if (all !== literal.length) throw new Error(`${file}: a bus request whose subject is not a string literal cannot be granted`);
        for (const subject of literal) subjects.add(subject);
      }
    }
  };
  walk(path.join(SERVICES_DIR, service, 'src'));
  return [...subjects].sort();
}
