import { readFileSync } from 'node:fs';
import path from 'node:path';

const DIR = path.resolve(__dirname, '../fixtures/platforms');

/**
 * A payload the platforms publish (`test/fixtures/platforms`, sources in its README), as the text
 * to deliver. `edits` replace exact text (ids, SKUs, a status): each must occur, so a fixture that
 * changes under a test fails it instead of silently testing something else. Shopify's ids exceed
 * 2^53, so edits work on the text, never on a parsed copy.
 */
export function published(file: string, edits: Array<[string, string]> = [], options: { unwrap?: string } = {}): string {
  let text = readFileSync(path.join(DIR, file), 'utf8');
  if (options.unwrap) {
    // Only for payloads whose numbers a double holds exactly (the REST examples' 9-digit ids).
    let value: unknown = JSON.parse(text);
    for (const key of options.unwrap.split('.')) value = (value as Record<string, unknown>)[key];
    text = JSON.stringify(value, null, 2);
  }
  for (const [from, to] of edits) {
    if (!text.includes(from)) throw new Error(`${file}: "${from}" not found`);
    text = text.split(from).join(to);
  }
  return text;
}
