import { NotFoundException } from '@nestjs/common';
import { findByIdOr404, validObjectIdOr404 } from './object-id';

const ID = '64b7f0c2a1b2c3d4e5f60718';

describe('validObjectIdOr404', () => {
  it('returns a 24-hex id, in either case', () => {
    expect(validObjectIdOr404(ID, 'Nope')).toBe(ID);
    expect(validObjectIdOr404(ID.toUpperCase(), 'Nope')).toBe(ID.toUpperCase());
  });

  // A 12-character string is something Mongoose could cast to an ObjectId, but it is no id a client was
  // given.
  it.each(['', 'abc', `${ID}0`, 'zzzzzzzzzzzzzzzzzzzzzzzz', '0123456789ab'])(
    'answers 404 with the given message for %j',
    (id) => {
      expect(() => validObjectIdOr404(id, 'Thing not found')).toThrow(
        new NotFoundException('Thing not found'),
      );
    },
  );
});

describe('findByIdOr404', () => {
  it('hands the id to the lookup and returns what it found', async () => {
    const find = jest.fn((id: string) => Promise.resolve({ _id: id, name: 'x' }));
    await expect(findByIdOr404(ID, 'Thing not found', find)).resolves.toEqual({ _id: ID, name: 'x' });
    expect(find).toHaveBeenCalledWith(ID);
  });

  it('answers 404 when the lookup finds nothing', async () => {
    await expect(findByIdOr404(ID, 'Thing not found', () => Promise.resolve(null))).rejects.toThrow(
      new NotFoundException('Thing not found'),
    );
  });

  it('answers 404 for a malformed id without calling the lookup', async () => {
    const find = jest.fn(() => Promise.resolve({}));
    await expect(findByIdOr404('nope', 'Thing not found', find)).rejects.toBeInstanceOf(NotFoundException);
    expect(find).not.toHaveBeenCalled();
  });
});
