import { containsPattern } from './like';

describe('containsPattern', () => {
  it('matches anywhere and escapes the pattern characters a caller typed', () => {
    expect(containsPattern('lap')).toBe('%lap%');
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});
