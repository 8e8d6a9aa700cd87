import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { classifyBulkWriteFailure, duplicatesOf } from './bulk-writes';

const duplicate = (index: number) => ({ index, code: 11000, errmsg: 'E11000 duplicate key' });

describe('classifyBulkWriteFailure', () => {
  it('reads per-document refusals: duplicates apart from the others', () => {
    const failure = classifyBulkWriteFailure({
      writeErrors: [duplicate(0), { index: 2, code: 121 }, duplicate(3)],
    });
    expect(failure).toEqual({
      kind: 'refused',
      duplicates: new Set([0, 3]),
      others: [{ index: 2, code: 121 }],
    });
  });

  it('calls a batch lost as a whole (a closed connection, NotWritablePrimary) unknown', () => {
    expect(classifyBulkWriteFailure({ writeErrors: [], code: 10107 })).toEqual({ kind: 'unknown' });
    expect(classifyBulkWriteFailure(new Error('connection 2 to 127.0.0.1 closed'))).toEqual({
      kind: 'unknown',
    });
  });

  it('calls a write-concern failure unknown even beside duplicates (an election may roll the rest back)', () => {
    const driverError = {
      writeErrors: [duplicate(1)],
      result: { getWriteConcernError: () => ({ code: 64 }) },
    };
    expect(classifyBulkWriteFailure(driverError)).toEqual({ kind: 'unknown' });
    expect(
      classifyBulkWriteFailure({ writeErrors: [duplicate(1)], writeConcernError: { code: 91 } }),
    ).toEqual({
      kind: 'unknown',
    });
  });

  it('lets only duplicates through duplicatesOf; anything else is thrown as it came', () => {
    expect(duplicatesOf({ writeErrors: [duplicate(4)] })).toEqual(new Set([4]));
    const lost = { writeErrors: [] };
    expect(() => duplicatesOf(lost)).toThrow();
    const refused = { writeErrors: [duplicate(0), { index: 1, code: 121 }] };
    expect(() => duplicatesOf(refused)).toThrow();
  });
});

describe('Bulk writes in src/', () => {
  it('all go through bulk-writes.ts, which classifies their failures', () => {
    const root = join(__dirname, '../..');
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/(?<!\.spec)\.ts$/.test(entry.name) && !path.endsWith('bulk-writes.ts')) {
          const calls = readFileSync(path, 'utf8').match(/\.(bulkWrite|insertMany)\(/g);
          if (calls) offenders.push(relative(root, path));
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});
