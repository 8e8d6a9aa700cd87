import { BadRequestException } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsString } from 'class-validator';
import { createValidationPipe } from './validation-pipe';

class Body {
  @IsString() name: string;
  @Type(() => Number) @IsInt() count: number;
}

const validate = (value: unknown) =>
  createValidationPipe().transform(value, { type: 'body', metatype: Body });

describe('createValidationPipe', () => {
  it('gives the handler a DTO instance with its transforms applied', async () => {
    const body: unknown = await validate({ name: 'a', count: '3' });
    expect(body).toBeInstanceOf(Body);
    expect(body).toEqual(Object.assign(new Body(), { name: 'a', count: 3 }));
  });

  it('answers 400 naming a field the DTO does not declare', async () => {
    const refused = validate({ name: 'a', count: 1, extra: true });
    await expect(refused).rejects.toBeInstanceOf(BadRequestException);
    await expect(refused).rejects.toMatchObject({
      response: { message: ['property extra should not exist'] },
    });
  });

  it('answers 400 to an array where the DTO describes an object', async () => {
    for (const value of [[], [{ name: 'a', count: 1 }]]) {
      await expect(validate(value)).rejects.toMatchObject({
        response: { message: 'The body must be a JSON object' },
      });
    }
  });
});
