import type { EstadoReserva } from '@erp/contracts';

/** What a transition does to stock besides changing the state. */
export type StockEffect = 'none' | 'take' | 'return';

export type Transition = { kind: 'noop' } | { kind: 'move'; to: EstadoReserva; stock: StockEffect } | { kind: 'refuse'; message: string };

/**
 * Confirming makes a reservation final. A reservation already released (its origin failed, or
 * the sweeper released it before the sale committed) takes its stock again: a sale that exists
 * always holds its stock.
 */
export function confirmTransition(estado: EstadoReserva): Transition {
  switch (estado) {
    case 'reservada':
      return { kind: 'move', to: 'confirmada', stock: 'none' };
    case 'liberada':
      return { kind: 'move', to: 'confirmada', stock: 'take' };
    case 'confirmada':
      return { kind: 'noop' };
  }
}

/** Releasing gives the stock back once; a confirmed reservation belongs to an existing sale and stays. */
export function releaseTransition(estado: EstadoReserva): Transition {
  switch (estado) {
    case 'reservada':
      return { kind: 'move', to: 'liberada', stock: 'return' };
    case 'liberada':
      return { kind: 'noop' };
    case 'confirmada':
      return { kind: 'refuse', message: 'La reserva ya está confirmada: su stock pertenece a una operación existente' };
  }
}

/** What the sweeper does with an overdue reservation, given its origin's answer. */
export function sweepDecision(answer: { exists: boolean } | 'unknown'): 'confirm' | 'release' | 'later' {
  if (answer === 'unknown') return 'later';
  return answer.exists ? 'confirm' : 'release';
}

/** Pause before asking the origin again after it could not answer: doubles up to ten minutes. */
export function nextCheckDelayMs(baseMs: number, checks: number): number {
  return Math.min(baseMs * 2 ** Math.min(checks, 10), 600_000);
}
