/** Decimal strings as the platforms send them ("12.50"), added in whole cents so totals are exact. */
export const toCents = (amount: string | number): number => {
  const text = typeof amount === 'number' ? amount.toFixed(2) : amount.trim();
  if (!/^-?\d+(\.\d{1,2})?$/.test(text)) throw new Error(`Not an amount to the cent: "${text}"`);
  const negative = text.startsWith('-');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const cents = Number(whole) * 100 + Number(frac.padEnd(2, '0'));
  return negative ? -cents : cents;
};

export const fromCents = (cents: number): string => {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
};

export const sumCents = (amounts: Array<string | number>): number => amounts.reduce<number>((s, a) => s + toCents(a), 0);
