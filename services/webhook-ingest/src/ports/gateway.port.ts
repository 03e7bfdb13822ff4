import type { Bus } from '@erp/bus';
import { webhookGatewaySubjects, type TenantContext } from '@erp/contracts';
import { Unprocessable } from '../domain/failures';

/**
 * The company context and acting user of an integration, from the gateway (owner of both),
 * remembered for `ttlMs`: a burst of deliveries asks once.
 */
export function gatewayContexts(bus: Bus, ttlMs: number) {
  const cache = new Map<string, { at: number; ctx: TenantContext }>();
  return async (empresaId: number, usuarioId: number, requestId: string): Promise<TenantContext> => {
    const key = `${empresaId}:${usuarioId}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return { ...hit.ctx, requestId };
    const reply = await bus.request(
      webhookGatewaySubjects,
      'gateway.webhook.context',
      { empresa_id: empresaId, usuario_id: usuarioId },
      { requestId },
    );
    if (!reply.empresa) throw new Unprocessable('La empresa de la integración no existe o está inactiva');
    if (!reply.usuario) throw new Unprocessable('El usuario de la integración no existe o está inactivo');
    const ctx: TenantContext = { requestId, empresa: reply.empresa, usuario: reply.usuario };
    cache.set(key, { at: Date.now(), ctx });
    return ctx;
  };
}

export type ContextLookup = ReturnType<typeof gatewayContexts>;
