import { InventoryListRequest } from '@erp/contracts';
import { filtersApplied } from './list-filters';

describe('filtersApplied', () => {
  it('echoes the filters sent, normalised, without paging or ordering', () => {
    const request = InventoryListRequest.parse({ nombre: 'lap', enable: 1, con_stock: false, page: 2, order_by: 'precio' });
    expect(filtersApplied(request)).toEqual({ nombre: 'lap', enable: 1, con_stock: false });
  });

  it('is empty when no filter was sent', () => {
    expect(filtersApplied(InventoryListRequest.parse({}))).toEqual({});
  });
});
