import { Amount, BlankAsAbsentText, BlankAsNullText, ClearableText, Id, NonEmptyText, RequiredText } from './fields';

const messages = (result: { success: boolean; error?: { issues: Array<{ message: string }> } }) =>
  result.success ? [] : result.error!.issues.map((i) => i.message);

describe('Id', () => {
  it('answers the same Spanish messages wherever it is used', () => {
    expect(messages(Id.safeParse(undefined))).toEqual(['Es obligatorio']);
    expect(messages(Id.safeParse(null))).toEqual(['Es obligatorio']);
    expect(messages(Id.safeParse('7'))).toEqual(['Debe ser un número entero']);
    expect(messages(Id.safeParse(1.5))).toEqual(['Debe ser un número entero']);
    expect(messages(Id.safeParse(0))).toEqual(['Debe ser mayor que 0']);
    expect(messages(Id.safeParse(2_147_483_648))).toEqual(['No es un id válido']);
    expect(Id.parse(2_147_483_647)).toBe(2_147_483_647);
  });
});

describe('Amount', () => {
  it('keeps bounds, the scale and, when asked, refuses zero', () => {
    const sut = Amount({ min: 0, max: 100, scale: 2, positive: true });
    expect(sut.parse(12.34)).toBe(12.34);
    expect(messages(sut.safeParse(12.345))).toEqual(['Debe tener como máximo 2 decimales']);
    expect(messages(sut.safeParse(0))).toEqual(['Debe ser mayor que 0']);
    expect(messages(sut.safeParse(101))).toEqual(['Debe ser menor o igual a 100']);
    expect(messages(sut.safeParse(undefined))).toEqual(['Es obligatorio']);
  });

  it('takes any number of decimals when no scale is given', () => {
    expect(Amount({ min: 0, max: 10 }).parse(1.23456)).toBe(1.23456);
  });
});

describe('the text rules', () => {
  it('tell absent, blank and given text apart, each in its own way', () => {
    expect([BlankAsAbsentText(10).parse('  '), BlankAsAbsentText(10).parse(null), BlankAsAbsentText(10).parse(' a ')]).toEqual([
      undefined,
      undefined,
      'a',
    ]);
    expect([BlankAsNullText(10).parse(''), BlankAsNullText(10).parse(undefined), BlankAsNullText(10).parse(' b ')]).toEqual([
      null,
      null,
      'b',
    ]);
    expect([ClearableText(10).parse(null), ClearableText(10).parse(undefined), ClearableText(10).parse(' ')]).toEqual([
      null,
      undefined,
      '',
    ]);
  });

  it('refuse blank required text as missing, and blank given text as empty', () => {
    expect(messages(RequiredText(10).safeParse('  '))).toEqual(['Es obligatorio']);
    expect(messages(NonEmptyText(10).safeParse('  '))).toEqual(['No puede estar vacío']);
    expect(messages(RequiredText(3).safeParse('abcd'))).toEqual(['Debe tener como máximo 3 caracteres']);
  });
});
