const LONG_DIGITS = /\d{16}/;

/**
 * Parses JSON keeping integers too long for a double (Shopify ids reach 18 digits) as their exact
 * digits, in strings: `JSON.parse` would silently round them, and an order id that changes by one
 * unit is another order.
 */
export function parseJsonExact(text: string): unknown {
  // Without a run of 16 digits anywhere there is nothing to keep: the plain parser is exact.
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  let out = '';
  let i = 0;
  let inString = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') {
        out += text[i + 1] ?? '';
        i += 2;
        continue;
      }
      if (ch === '"') inString = false;
      i++;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      i++;
      continue;
    }
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9eE.+-]/.test(text[j]!)) j++;
      const token = text.slice(i, j);
      out += /^-?\d{16,}$/.test(token) ? `"${token}"` : token;
      i = j;
      continue;
    }
    out += ch;
    i++;
  }
  return JSON.parse(out);
}

/** An id as exact text: numbers and digit strings alike (`0` and empty mean "none"). */
export function idText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && /^\d+$/.test(value) && !/^0+$/.test(value)) return value;
  return null;
}

/**
 * A platform's text field, trimmed, or null when absent or blank. NUL characters (U+0000) are
 * dropped: Postgres text cannot hold them, and a stray one in a customer's or product's name is
 * no reason to refuse an order the shop has already taken.
 */
export function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const cleaned = value.replaceAll('\u0000', '').trim();
  return cleaned !== '' ? cleaned : null;
}
