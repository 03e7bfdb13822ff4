import { randomUUID } from 'node:crypto';
import type { TenantContext } from '@erp/contracts';

export interface TenantOptions {
  /** Whether the company may sell without stock (default true, as most companies do). */
  venderSinStock?: boolean;
  /** The acting user (default none, as for an API key without one). */
  usuario?: { id: number; nombre: string } | null;
  nombre?: string;
  requestId?: string;
}

/**
 * The context of a request on behalf of company `empresaId`, as the gateway builds it after
 * authentication: named `Empresa <id>`, 13 % tax, a fresh request id.
 */
export function tenant(empresaId = 1, options: TenantOptions = {}): TenantContext {
  return {
    requestId: options.requestId ?? `test-${randomUUID()}`,
    empresa: { id: empresaId, nombre: options.nombre ?? `Empresa ${empresaId}`, iva: '13', venderSinStock: options.venderSinStock ?? true },
    usuario: options.usuario ?? null,
  };
}
