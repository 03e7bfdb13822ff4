import { confirmTransition, nextCheckDelayMs, releaseTransition, sweepDecision } from './reservation';

describe('reservation transitions', () => {
  it('confirms a held reservation without moving stock, and a confirmed one is a no-op', () => {
    expect(confirmTransition('reservada')).toEqual({ kind: 'move', to: 'confirmada', stock: 'none' });
    expect(confirmTransition('confirmada')).toEqual({ kind: 'noop' });
  });

  it('takes the stock again when confirming a reservation that was released: the sale exists', () => {
    expect(confirmTransition('liberada')).toEqual({ kind: 'move', to: 'confirmada', stock: 'take' });
  });

  it('releases a held reservation once and refuses to release a confirmed one', () => {
    expect(releaseTransition('reservada')).toEqual({ kind: 'move', to: 'liberada', stock: 'return' });
    expect(releaseTransition('liberada')).toEqual({ kind: 'noop' });
    expect(releaseTransition('confirmada')).toMatchObject({ kind: 'refuse' });
  });
});

describe('sweepDecision', () => {
  it('confirms when the origin exists, releases when it does not, and waits when nobody answered', () => {
    expect(sweepDecision({ exists: true })).toBe('confirm');
    expect(sweepDecision({ exists: false })).toBe('release');
    expect(sweepDecision('unknown')).toBe('later');
  });

  it('backs off exponentially up to ten minutes', () => {
    expect([0, 1, 2].map((n) => nextCheckDelayMs(1_000, n))).toEqual([1_000, 2_000, 4_000]);
    expect(nextCheckDelayMs(10_000, 50)).toBe(600_000);
  });
});
