import { crash } from '@erp/runtime';
import { faultHooks } from './fault-injection';

describe('faultHooks', () => {
  it('sets no hook when fault injection is off', () => {
    expect(faultHooks('off')).toEqual({ create: {}, update: {} });
  });

  it('dies right after the stage each setting names, and only there', () => {
    expect(faultHooks('exit-after-reserve')).toEqual({ create: { reserved: crash }, update: {} });
    expect(faultHooks('exit-after-commit')).toEqual({ create: { committed: crash }, update: {} });
    expect(faultHooks('exit-after-update-adjust')).toEqual({ create: {}, update: { afterAdjust: crash } });
  });
});
