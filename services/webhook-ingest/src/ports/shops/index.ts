import type { Plataforma } from '@erp/contracts';
import type { PushTarget } from '../../db/stock.repository';
import type { ShopSecrets } from '../../domain/credentials';
import type { CallPolicy, TiendaApi } from './shop';
import { shopifyShop } from './shopify';
import { wooShop } from './woocommerce';

export {
  DEFAULT_CALL_POLICY,
  ShopCallError,
  type CallPolicy,
  type PedidoStamp,
  type TiendaApi,
  type PedidoTienda,
  type ShopProductRef,
  type StockWriteItem,
  type SubscriptionCheck,
} from './shop';

/** The shop's Admin API client for an integration's platform, URL and credentials. */
export function openShop(plataforma: Plataforma, url: string, secrets: ShopSecrets, policy: CallPolicy): TiendaApi {
  if (plataforma === 'woocommerce') return wooShop({ url, clave: secrets.clave ?? '', secreto: secrets.secreto ?? '' }, policy);
  return shopifyShop({ url, token: secrets.token ?? '' }, policy);
}

/** The client of an integration's shop, from its row (`tienda_url` set). */
export const openTargetShop =
  (policy: CallPolicy) =>
  (target: PushTarget, secrets: ShopSecrets): TiendaApi =>
    openShop(target.plataforma, target.tienda_url!, secrets, policy);
