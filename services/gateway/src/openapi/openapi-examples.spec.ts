import { DEFAULT_REASON, REASON_VALUES, type Reason } from '@erp/contracts';
import { partnerApiDocument } from './write-openapi';
import { webhooksDocument } from './openapi';
import { OUTSIDE_OPERATIONS, RECORDED_EXAMPLES, stableAnswers } from './openapi-examples';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/**
 * Reasons only a refusal whose thrower named none carries (`DEFAULT_REASON`: the back office, a
 * service of an older version during a rolling update): no partner request is answered with them,
 * so no run can record one.
 */
const ONLY_BY_DEFAULT: readonly Reason[] = ['registro_existente'];

describe('the recorded OpenAPI examples', () => {
  const sut = RECORDED_EXAMPLES;

  it('hold a recorded refusal of every reason a partner can be answered with', () => {
    const recorded = new Set<string>();
    for (const entry of Object.values(sut)) {
      for (const reason of Object.keys(entry.refusals ?? {})) recorded.add(reason);
      for (const body of Object.values<Json>(entry.responses)) if (typeof body?.reason === 'string') recorded.add(body.reason);
    }
    expect(REASON_VALUES.filter((reason) => !recorded.has(reason) && !ONLY_BY_DEFAULT.includes(reason))).toEqual([]);
    // The exemption is for the defaults alone, and only while no run records them.
    expect(ONLY_BY_DEFAULT.filter((reason) => !Object.values(DEFAULT_REASON).includes(reason) || recorded.has(reason))).toEqual([]);
  });

  it('hold a recorded request of every documented operation, and an answer of each of its JSON successes', () => {
    const missing: string[] = [];
    for (const doc of [partnerApiDocument(), webhooksDocument()] as Json[]) {
      for (const [template, item] of Object.entries<Json>(doc.paths)) {
        for (const method of ['get', 'post', 'put', 'patch', 'delete'].filter((m) => item[m])) {
          const name = `${method.toUpperCase()} ${template}`;
          const entry = sut[name];
          if (!entry?.request) missing.push(`${name}: request`);
          for (const [status, response] of Object.entries<Json>(item[method].responses)) {
            if (Number(status) < 300 && response.content?.['application/json'] && entry?.responses[status] === undefined)
              missing.push(`${name}: ${status}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('keep the refusals no operation gives apart, each named by its reason', () => {
    const outside = sut[OUTSIDE_OPERATIONS]?.refusals ?? {};
    expect(Object.keys(outside).sort()).toEqual(['metodo_no_admitido', 'ruta_desconocida', 'solicitud_malformada']);
    for (const [reason, body] of Object.entries<Json>(outside)) expect(body.reason).toBe(reason);
  });
});

describe('stableAnswers', () => {
  it('numbers timestamps one second apart in the order they had, the same value always alike', () => {
    const sut = stableAnswers({
      created_at: '2026-11-25T18:55:18.575Z',
      updated_at: '2026-11-25T19:01:00.000Z',
      lines: [{ created_at: '2026-11-25T18:55:18.575Z' }],
      expira: '2026-11-24T10:00:00Z',
      fecha: '2026-03-10',
    });
    expect(sut).toEqual({
      created_at: '2026-03-10T15:00:01.000Z',
      updated_at: '2026-03-10T15:00:02.000Z',
      lines: [{ created_at: '2026-03-10T15:00:01.000Z' }],
      expira: '2026-03-10T15:00:00.000Z',
      fecha: '2026-03-10',
    });
  });

  it('numbers UUIDs, event ids and secrets in the order they appear, so equal values stay equal', () => {
    const uuid = '7dd38ede-d172-4560-86b1-c0b5d88d97b5';
    const sut = stableAnswers({
      data: [{ id: 'evt_e218eb6e13fdcb35fbea87cb3ba7bb4b', referencia: uuid }, { id: 'evt_0d6f2b8a4c175f0c1a9e3b7d4c2a9e51' }],
      pagination: { next_after: 'evt_0d6f2b8a4c175f0c1a9e3b7d4c2a9e51' },
      secret: 'whsec_c2VjcmV0by1yZWFs',
      otra: uuid,
      texto: 'venta-7dd38ede',
    });
    expect(sut).toEqual({
      data: [{ id: `evt_${'0'.repeat(31)}1`, referencia: '00000000-0000-4000-8000-000000000001' }, { id: `evt_${'0'.repeat(31)}2` }],
      pagination: { next_after: `evt_${'0'.repeat(31)}2` },
      secret: `whsec_${Buffer.from('secreto-de-ejemplo-1').toString('base64')}`,
      otra: '00000000-0000-4000-8000-000000000001',
      texto: 'venta-7dd38ede',
    });
  });
});
