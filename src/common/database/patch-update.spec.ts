import { BadRequestException } from '@nestjs/common';
import { patchUpdate } from './patch-update';

interface Body {
  name?: string;
  description?: string | null;
  expiresAt?: Date | null;
  isActive?: boolean;
}

describe('patchUpdate', () => {
  it('sets the values sent and leaves out the fields not sent', () => {
    const body: Body = { name: 'New', description: undefined, isActive: false };
    expect(patchUpdate(body, ['description'])).toEqual({ $set: { name: 'New', isActive: false } });
  });

  it('unsets a clearable field sent as null', () => {
    const expiresAt = new Date('2030-01-01T00:00:00Z');
    expect(patchUpdate<Body>({ description: null, expiresAt }, ['description', 'expiresAt'])).toEqual({
      $set: { expiresAt },
      $unset: { description: 1 },
    });
  });

  it('answers 400 naming a field that may not be cleared', () => {
    const update = () => patchUpdate<Body>({ name: 'x', expiresAt: null }, ['description']);
    expect(update).toThrow(BadRequestException);
    expect(update).toThrow('expiresAt must not be null');
  });

  it('gives an empty $set for an empty body', () => {
    expect(patchUpdate<Body>({})).toEqual({ $set: {} });
  });
});
