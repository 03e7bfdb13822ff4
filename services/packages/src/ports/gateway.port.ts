import type { Bus } from '@erp/bus';
import { gatewayDirectorySubjects, type ReplyOf, type RequestOf, type TenantContext } from '@erp/contracts';

type Req<S extends keyof typeof gatewayDirectorySubjects> = RequestOf<typeof gatewayDirectorySubjects, S>;
type Reply<S extends keyof typeof gatewayDirectorySubjects> = ReplyOf<typeof gatewayDirectorySubjects, S>;

/** What package imports ask of the gateway, owner of the companies' users. */
export interface GatewayPort {
  /** The id of the company's user of each advisor code asked (a code no user has is left out). */
  usuariosByCodigo(ctx: TenantContext, req: Req<'gateway.usuario.by-codigo'>): Promise<Reply<'gateway.usuario.by-codigo'>>;
}

export function busGateway(bus: Bus): GatewayPort {
  return {
    usuariosByCodigo: (ctx, req) => bus.request(gatewayDirectorySubjects, 'gateway.usuario.by-codigo', req, ctx),
  };
}
