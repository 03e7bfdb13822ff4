import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ShopifyShop, type ShopifyOptions } from './shopify';
import { testCa } from './tls';
import { WooShop, type WooOptions } from './woocommerce';

export { testCa, type TestCa } from './tls';
export { caFetch } from './https';
export { webhookReceiver, type Received } from './receiver';
export type { DeliveryAttempt, WebhookFaults } from './deliveries';
export type { InjectedFailure, ShopMetrics, StockWrite } from './common';
export { WooShop, type WooOptions, type WooOrderSpec, type WooRefundSpec, type WooWebhook } from './woocommerce';
export { ShopifyShop, type ShopifyOptions, type ShopifyOrderSpec, type ShopifySubscription } from './shopify';
export { SHOPIFY_API_VERSION } from './shopify-schema';

let written: string | undefined;

/** The test CA written to a file, for `NODE_EXTRA_CA_CERTS` of child processes (read only at their start). */
export function caFile(): string {
  if (!written) {
    written = path.join(tmpdir(), `shop-simulator-ca-${process.pid}.pem`);
    writeFileSync(written, testCa().caPem);
  }
  return written;
}

/** One shop of each platform, trusted through the same test CA. */
export async function startShops(options: { woocommerce?: WooOptions; shopify?: ShopifyOptions } = {}): Promise<{
  woo: WooShop;
  shopify: ShopifyShop;
  caPem: string;
  caFile: string;
  close: () => Promise<void>;
}> {
  const [woo, shopify] = await Promise.all([WooShop.start(options.woocommerce), ShopifyShop.start(options.shopify)]);
  return {
    woo,
    shopify,
    caPem: testCa().caPem,
    caFile: caFile(),
    close: async () => {
      await Promise.all([woo.close(), shopify.close()]);
    },
  };
}
