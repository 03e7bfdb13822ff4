import type { Row } from '../schema-clients';
import { olderThan, type Check } from './check';

export const inboxProcessed: Check = {
  name: 'the webhook inbox is processed: no delivery left unprocessed',
  run: async (q, e, o) => {
    const pending = await q(
      `select id from webhook_ingest.entregas where empresa_id = $1 and estado = 'recibida' and recibida_at < ${olderThan(o.inFlightMs)} order by id`,
      [e.id],
    );
    const [{ n }] = (await q('select count(*)::int as n from webhook_ingest.entregas where empresa_id = $1', [e.id])) as [Row];
    return {
      checked: n,
      violations:
        pending.length > 0
          ? [
              `empresa ${e.id}: ${pending.length} deliveries still recibida: ${pending
                .slice(0, 20)
                .map((r) => r.id)
                .join(', ')}`,
            ]
          : [],
    };
  },
};
