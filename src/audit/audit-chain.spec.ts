import { Types } from 'mongoose';
import { ChainCheck, GENESIS_HASH, recordHash } from './audit-chain';
import type { AuditRecord } from './schemas/audit-record.schema';

function chain(length: number): AuditRecord[] {
  const records: AuditRecord[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= length; seq += 1) {
    const record = {
      _id: new Types.ObjectId(),
      seq,
      prevHash,
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
      startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
      actorId: 'u1',
      action: 'apiKey.create',
      fields: ['name'],
      outcome: 'done',
      status: 201,
    } as Omit<AuditRecord, 'hash'>;
    const hash = recordHash(record);
    records.push({ ...record, hash });
    prevHash = hash;
  }
  return records;
}

const firstBreak = (records: AuditRecord[]) => {
  const check = new ChainCheck();
  for (const record of records) {
    const broken = check.next(record);
    if (broken) return broken;
  }
  return null;
};

describe('audit chain', () => {
  it('holds for records as written, and from the oldest kept one after retention', () => {
    const records = chain(5);
    expect(firstBreak(records)).toBeNull();
    expect(firstBreak(records.slice(2))).toBeNull();
  });

  it('names the edited record', () => {
    const records = chain(5);
    records[2] = { ...records[2], actorId: 'someone-else' };
    expect(firstBreak(records)?.seq).toBe(3);
    expect(firstBreak(records)?.reason).toMatch(/altered/);
  });

  it('names the record after a deleted one, and a rewritten link', () => {
    const records = chain(5);
    expect(firstBreak([...records.slice(0, 2), ...records.slice(3)])).toMatchObject({ seq: 4 });
    const relinked = chain(5);
    relinked[3] = { ...relinked[3], prevHash: GENESIS_HASH };
    expect(firstBreak(relinked)?.seq).toBe(4);
    expect(firstBreak(relinked)?.reason).toMatch(/prevHash/);
  });
});
