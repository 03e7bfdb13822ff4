import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BUS_IDENTITIES, SERVICES } from '@erp/contracts';
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
});
