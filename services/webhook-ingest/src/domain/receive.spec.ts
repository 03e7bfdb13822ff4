import { shopifyHeaders, shopifyOrderBody, sign, wooHeaders, wooOrder, wooPing, wooProduct } from '../../test/platform.factories';
import { classify, isRelevantHeader, type IncomingDelivery } from './classify';
import { idText, parseJsonExact } from './json';
import { verifySignature } from './signature';
import { generateToken, hashToken, tokenMatches } from './token';

const lower = (headers: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([k]) => isRelevantHeader(k))
      .map(([k, v]) => [k.toLowerCase(), v]),
  );

const woo = (recurso: 'pedido' | 'producto', payload: unknown, topic: string): IncomingDelivery => {
  const body = JSON.stringify(payload);
  return { plataforma: 'woocommerce', recurso, headers: lower(wooHeaders(body, topic)), body: Buffer.from(body) };
};

const shopifyLine = {
  id: '866550311766439020',
  product_id: '632910392',
  variant_id: '808950810',
  sku: 'IPOD2008BLACK',
  title: 'IPod Nano - 8GB',
  quantity: 1,
  price: '199.00',
};

describe('parseJsonExact', () => {
  it('keeps integers beyond 2^53 exact, as digit strings, and leaves strings and small numbers alone', () => {
    const sut = parseJsonExact('{"id":820982911946154508,"n":-12,"x":1.5e3,"s":"820982911946154508 \\"q\\"","a":[9007199254740993]}');
    expect(sut).toEqual({ id: '820982911946154508', n: -12, x: 1500, s: '820982911946154508 "q"', a: ['9007199254740993'] });
  });

  it('parses a body without 16 digits in a row as JSON.parse does, and still refuses invalid JSON', () => {
    const text = '{"id":123456789012345,"total":"10.00","x":-1.5e3,"s":"a\\"b","n":null}';
    expect(parseJsonExact(text)).toEqual(JSON.parse(text));
    expect(() => parseJsonExact('{"id":1,')).toThrow(SyntaxError);
  });

  it('reads ids from numbers and digit strings, and treats 0 as none', () => {
    expect([idText(93), idText('820982911946154508'), idText(0), idText('0'), idText('x'), idText(null)]).toEqual([
      '93',
      '820982911946154508',
      null,
      null,
      null,
      null,
    ]);
  });
});

describe('verifySignature', () => {
  const body = Buffer.from('{"id":1}');

  it('accepts the base64 HMAC-SHA256 of the raw body and refuses anything else', () => {
    expect(verifySignature(body, 's3cret', sign(body, 's3cret'))).toBe(true);
    expect(verifySignature(body, 's3cret', sign(body, 'other'))).toBe(false);
    expect(verifySignature(Buffer.from('{"id": 1}'), 's3cret', sign(body, 's3cret'))).toBe(false);
    expect(verifySignature(body, 's3cret', undefined)).toBe(false);
    expect(verifySignature(body, 's3cret', 'not base64 at all')).toBe(false);
  });
});

describe('integration tokens', () => {
  it('are URL-safe, distinct, and match only their own hash', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{24,}$/);
    expect(a).not.toBe(b);
    expect(tokenMatches(a, hashToken(a))).toBe(true);
    expect(tokenMatches(b, hashToken(a))).toBe(false);
  });
});

describe('classify', () => {
  it('recognises the WooCommerce ping', () => {
    const ping = wooPing(42);
    expect(classify({ plataforma: 'woocommerce', recurso: 'pedido', headers: lower(ping.headers), body: Buffer.from(ping.body) })).toEqual({
      kind: 'ping',
    });
  });

  it('keys a WooCommerce order by id and content: a retry is a duplicate, a change within the same second is not', () => {
    const order = wooOrder({
      id: 727,
      status: 'processing',
      date_modified_gmt: '2026-03-12T16:04:35',
      line_items: [{ product_id: 93, quantity: 2, total: '6.00' }],
    });
    const first = classify(woo('pedido', order, 'order.created'));
    const retry = classify(woo('pedido', order, 'order.updated'));
    expect(first).toEqual({
      kind: 'entrega',
      tema: 'order.created',
      clave: expect.stringMatching(/^pedido:727:sha256:[0-9a-f]{64}$/),
      referencia: 'woo-727',
    });
    expect(retry).toMatchObject({ clave: (first as { clave: string }).clave });
    const cancelled = classify(woo('pedido', { ...order, status: 'cancelled' }, 'order.updated'));
    expect(cancelled).toMatchObject({ kind: 'entrega', referencia: 'woo-727' });
    expect((cancelled as { clave: string }).clave).not.toBe((first as { clave: string }).clave);
  });

  it('ignores WooCommerce topics the path does not act on', () => {
    expect(classify(woo('pedido', { id: 727 }, 'order.deleted'))).toMatchObject({ kind: 'ignorar' });
    expect(classify(woo('pedido', { id: 5 }, 'customer.created'))).toMatchObject({ kind: 'ignorar' });
    expect(classify(woo('producto', { id: 5 }, 'order.created'))).toMatchObject({ kind: 'ignorar' });
  });

  it('keys products by id and modification time, and deletions by their delivery', () => {
    const product = wooProduct({
      id: 794,
      name: 'Camiseta',
      sku: 'CAM-01',
      regular_price: '21.99',
      date_modified_gmt: '2026-03-12T16:04:35',
    });
    expect(classify(woo('producto', product, 'product.updated'))).toMatchObject({
      kind: 'entrega',
      clave: 'producto:794:2026-03-12T16:04:35',
      referencia: 'woo-producto-794',
    });
    expect(classify(woo('producto', { id: 794 }, 'product.deleted'))).toMatchObject({
      kind: 'entrega',
      clave: expect.stringMatching(/^producto-eliminado:794:[0-9a-f]{32}$/),
    });
  });

  it('keys Shopify orders by X-Shopify-Event-Id, keeps 18-digit ids exact, and ignores other topics', () => {
    const body = shopifyOrderBody({ id: '820982911946154508', financial_status: 'paid', line_items: [shopifyLine] });
    const delivery = (topic: string, eventId: string): IncomingDelivery => ({
      plataforma: 'shopify',
      recurso: 'pedido',
      headers: lower(shopifyHeaders(body, topic, undefined, eventId)),
      body: Buffer.from(body),
    });
    expect(classify(delivery('orders/create', 'e-1'))).toEqual({
      kind: 'entrega',
      tema: 'orders/create',
      clave: 'evento:e-1',
      referencia: 'shop-820982911946154508',
    });
    expect(classify(delivery('products/update', 'e-2'))).toMatchObject({ kind: 'ignorar' });
    expect(classify(delivery('customers/create', 'e-3'))).toMatchObject({ kind: 'ignorar' });
  });
});
