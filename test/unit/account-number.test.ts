// Czech/Slovak account numbers in their national form (services/shared/validation.ts normalizeAccountNumber).
import { DomainError } from '../../services/shared/errors';
import { normalizeAccountNumber } from '../../services/shared/validation';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'accepted';
  } catch (err) {
    return (err as DomainError).code;
  }
};

describe('national account numbers: [prefix-]number/bank code', () => {
  it.each([
    ['19-2000145399/0800', '19-2000145399', '0800'],
    ['2000145399/0800', '2000145399', '0800'],
    ['000019-2000145399/0800', '19-2000145399', '0800'],
    ['0-2000145399/0800', '2000145399', '0800'],
    [' 19 - 2000145399 / 0800 ', '19-2000145399', '0800'],
    ['2600000003/1100', '2600000003', '1100'],
  ])('%s → %s with bank code %s', (typed, number, bankCode) => {
    expect(normalizeAccountNumber(typed)).toEqual({ number, bankCode });
  });

  it.each([
    ['19-2000145398/0800', 'number fails mod 11'],
    ['18-2000145399/0800', 'prefix fails mod 11'],
    ['2600000001/1100', 'number fails mod 11 (weights 6,3,7,9,10,5,8,4,2,1)'],
    ['0000000000/0800', 'no significant digits'],
    ['1234567-2000145399/0800', 'prefix longer than 6 digits'],
    ['2000145399/080', 'bank code not 4 digits'],
    ['ABC/0800', 'not digits'],
  ])('refuses %s (%s) with invalid_account_number', (typed) => {
    expect(codeOf(() => normalizeAccountNumber(typed))).toBe('invalid_account_number');
  });

  it('takes other numbers (foreign formats, no bank code suffix) after a character check only', () => {
    expect(normalizeAccountNumber('1')).toEqual({ number: '1', bankCode: null });
    expect(normalizeAccountNumber('11773016-11111018')).toEqual({ number: '11773016-11111018', bankCode: null });
    expect(codeOf(() => normalizeAccountNumber('12#34'))).toBe('invalid_account_number');
  });
});
