import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { BooleanQuery } from './boolean-query.decorator';

class Query {
  @BooleanQuery() isActive?: boolean;
}

const read = (query: Record<string, unknown>) => {
  const instance = plainToInstance(Query, query);
  return {
    value: instance.isActive,
    errors: validateSync(instance).flatMap((e) => Object.values(e.constraints ?? {})),
  };
};

describe('@BooleanQuery', () => {
  it('turns exactly "true" and "false" into booleans', () => {
    expect(read({ isActive: 'true' })).toEqual({ value: true, errors: [] });
    expect(read({ isActive: 'false' })).toEqual({ value: false, errors: [] });
  });

  it('leaves an absent parameter undefined', () => {
    expect(read({})).toEqual({ value: undefined, errors: [] });
  });

  it.each(['yes', 'no', '1', '0', 'True', 'FALSE', '', ['true', 'false']])(
    'refuses %j naming the field',
    (value) => {
      expect(read({ isActive: value }).errors).toEqual(['isActive must be true or false']);
    },
  );
});
