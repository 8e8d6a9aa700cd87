import { MongoServerError } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';

describe('isDuplicateKey', () => {
  it('recognises a server error and a bulk write entry with code 11000', () => {
    const serverError = new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });
    expect(isDuplicateKey(serverError)).toBe(true);
    expect(isDuplicateKey({ code: 11000, index: 3 })).toBe(true);
  });

  it('refuses other codes and values that are not errors', () => {
    expect(isDuplicateKey(new MongoServerError({ message: 'other', code: 11001 }))).toBe(false);
    expect(isDuplicateKey({ code: '11000' })).toBe(false);
    expect(isDuplicateKey(new Error('E11000 in the text only'))).toBe(false);
    expect(isDuplicateKey(null)).toBe(false);
    expect(isDuplicateKey(undefined)).toBe(false);
    expect(isDuplicateKey(11000)).toBe(false);
  });
});
