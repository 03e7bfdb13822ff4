/**
 * An `ILIKE` pattern that matches `text` anywhere, with the pattern's own wildcards escaped so a
 * `%` or `_` typed by the caller matches itself (Postgres' default escape character is `\`).
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
