import { BadRequestException } from '@nestjs/common';
import { IsOptional, IsString } from 'class-validator';
import { NOTHING_TO_UPDATE, NothingToUpdatePipe } from './nothing-to-update.pipe';

class UpdateThingDto {
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() description?: string | null;
}

describe('NothingToUpdatePipe', () => {
  const pipe = new NothingToUpdatePipe();

  it.each([[{}], [{ name: undefined }], [undefined], [null]])('refuses %p with a 400', (body) => {
    expect(() => pipe.transform(body)).toThrow(new BadRequestException(NOTHING_TO_UPDATE));
  });

  it('names the fields the DTO accepts', () => {
    expect(() => pipe.transform(new UpdateThingDto(), { type: 'body', metatype: UpdateThingDto })).toThrow(
      'Nothing to update: send at least one of name, description',
    );
  });

  it.each([[{ name: 'x' }], [{ description: null }], [{ isActive: false }], [{ tags: [] }]])(
    'passes %p through',
    (body) => {
      expect(pipe.transform(body)).toBe(body);
    },
  );
});
