/**
 * A return's event is applied to its sale once per kind, claimed as `<subject>:<return id>` by one
 * consumer name. Squaring a sale's registrations books a created return's amount and claims the
 * same key, so whichever of the two comes first applies it and the other changes nothing.
 */
export const RETURNS_CLAIMER = 'sales-returns';
export const RETURN_CREATED = 'events.returns.return.created';

export const returnClaim = (subject: string, idDevolucion: number): string => `${subject}:${idDevolucion}`;
