import {
  creditProblem,
  documentoProblem,
  formatCorrelativo,
  payment,
  remapReserveDetails,
  storedEstado,
  summaryMessage,
  takesStock,
  type DocumentoRow,
} from './venta-rules';
import { summarize } from './summary';

describe('sale states', () => {
  it('stores Pagada as Completada and the others as sent', () => {
    expect(['Pagada', 'Completada', 'Pendiente', 'Cotizacion'].map((e) => storedEstado(e as never))).toEqual([
      'Completada',
      'Completada',
      'Pendiente',
      'Cotizacion',
    ]);
  });
  it('takes stock for Completada and Pendiente only', () => {
    expect(['Completada', 'Pendiente', 'Cotizacion', 'Anulada'].map((e) => takesStock(e as never))).toEqual([true, true, false, false]);
  });
});

describe('payment', () => {
  it('defaults monto_pago to the total for Pagada, and cambio to 0', () => {
    expect(payment('Pagada', '100.50', undefined, undefined)).toEqual({ monto_pago: '100.50', cambio: '0.00', saldo: '0.00' });
  });
  it('keeps monto_pago and cambio as sent', () => {
    expect(payment('Pagada', '95', '100', '5')).toEqual({ monto_pago: '100.00', cambio: '5.00', saldo: '0.00' });
  });
  it('leaves monto_pago empty for Completada when not sent', () => {
    expect(payment('Completada', '10', undefined, undefined).monto_pago).toBeNull();
  });
  it('owes the unpaid part of a pending sale, never below zero', () => {
    expect(payment('Pendiente', '300', '100', undefined).saldo).toBe('200.00');
    expect(payment('Pendiente', '300', undefined, undefined).saldo).toBe('300.00');
    expect(payment('Pendiente', '300', '500', undefined).saldo).toBe('0.00');
  });
});

describe('formatCorrelativo', () => {
  it('puts the prefix before the number', () => {
    expect(formatCorrelativo('FAC-', 12)).toBe('FAC-12');
    expect(formatCorrelativo('', 1000)).toBe('1000');
  });
});

describe('documentoProblem', () => {
  const doc: DocumentoRow = {
    id: 3,
    sucursal_id: 1,
    nombre: 'Factura',
    prefijo: 'F',
    correlativo: 1,
    activo: true,
    solo_cotizacion: false,
  };
  it('accepts an active document type of the branch', () => expect(documentoProblem(doc, 3, 1, 'Completada')).toBeUndefined());
  it('refuses a missing one', () => expect(documentoProblem(undefined, 9, 1, 'Completada')).toBe('El tipo de documento 9 no existe'));
  it('refuses an inactive one', () => expect(documentoProblem({ ...doc, activo: false }, 3, 1, 'Completada')).toMatch(/inactivo/));
  it('refuses one of another branch', () => expect(documentoProblem(doc, 3, 2, 'Completada')).toMatch(/no pertenece a la sucursal 2/));
  it('keeps quotation-only types for quotations', () => {
    expect(documentoProblem({ ...doc, solo_cotizacion: true }, 3, 1, 'Completada')).toMatch(/solo se usa para cotizaciones/);
    expect(documentoProblem({ ...doc, solo_cotizacion: true }, 3, 1, 'Cotizacion')).toBeUndefined();
  });
});

describe('creditProblem', () => {
  const cliente = { nombre: 'Juan', limite_credito: '1000.00' };
  it('accepts up to the limit', () => expect(creditProblem(cliente, '400', '600')).toBeUndefined());
  it('refuses above it, with the amounts', () => {
    expect(creditProblem(cliente, '400', '600.01')).toBe(
      'La venta excede el límite de crédito del cliente "Juan": límite 1000.00, saldo pendiente 400.00, esta venta 600.01, disponible 600.00',
    );
  });
  it('has no limit at 0', () => expect(creditProblem({ ...cliente, limite_credito: '0' }, '1e6', '5000')).toBeUndefined());
  it('lets a fully paid pending sale through', () => expect(creditProblem(cliente, '5000', '0')).toBeUndefined());
});

describe('remapReserveDetails', () => {
  it('names the sale lines behind the reservation lines', () => {
    expect(remapReserveDetails({ 'lineas.1.cantidad': ['corto'], id_bodega: ['x'] }, [[0], [3]])).toEqual({
      'detalles.3.cantidad': ['corto'],
      detalles: ['x'],
    });
  });
});

describe('summaryMessage', () => {
  it('uses the only message, or the first and how many more', () => {
    expect(summaryMessage({ a: ['uno'] })).toBe('uno');
    expect(summaryMessage({ a: ['uno'], b: ['dos', 'tres'] })).toBe('uno (y 2 problemas más)');
  });
});

describe('summarize', () => {
  it('adds the states, averages to the cent and lists every state', () => {
    const sut = summarize(
      [
        { estado: 'Completada', cantidad: 2, total: '100.00', iva: '11.50', descuento: '1.00' },
        { estado: 'Anulada', cantidad: 1, total: '0.01', iva: '0.00', descuento: '0.00' },
      ],
      ['Completada', 'Pendiente', 'Anulada', 'Cotizacion'],
    );
    expect(sut).toEqual({
      cantidad_ventas: 3,
      total_ventas: '100.01',
      total_iva: '11.50',
      total_descuentos: '1.00',
      promedio_venta: '33.34',
      ventas_por_estado: [
        { estado: 'Completada', cantidad: 2, total: '100.00' },
        { estado: 'Pendiente', cantidad: 0, total: '0.00' },
        { estado: 'Anulada', cantidad: 1, total: '0.01' },
        { estado: 'Cotizacion', cantidad: 0, total: '0.00' },
      ],
    });
  });
  it('answers zeros without sales', () => {
    expect(summarize([], ['Pendiente'])).toMatchObject({
      cantidad_ventas: 0,
      total_ventas: '0.00',
      promedio_venta: '0.00',
      ventas_por_estado: [{ estado: 'Pendiente', cantidad: 0, total: '0.00' }],
    });
  });
});
