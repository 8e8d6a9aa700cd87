import { BadRequestException } from '@nestjs/common';
import { NOTHING_TO_UPDATE, NothingToUpdatePipe } from './nothing-to-update.pipe';

describe('NothingToUpdatePipe', () => {
  const pipe = new NothingToUpdatePipe();

  it.each([[{}], [{ name: undefined }], [undefined], [null]])('refuses %p with a 400', (body) => {
    expect(() => pipe.transform(body)).toThrow(new BadRequestException(NOTHING_TO_UPDATE));
  });

  it.each([[{ name: 'x' }], [{ description: null }], [{ isActive: false }], [{ tags: [] }]])(
    'passes %p through',
    (body) => {
      expect(pipe.transform(body)).toBe(body);
    },
  );
});
