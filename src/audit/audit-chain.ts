import { createHash } from 'node:crypto';
import type { AuditRecord } from './schemas/audit-record.schema';

/** The `prevHash` of the first record ever written. */
export const GENESIS_HASH = '0'.repeat(64);

export type ChainedRecord = Omit<AuditRecord, 'hash'> & { hash?: string };

const iso = (date: Date | undefined) => (date ? new Date(date).toISOString() : null);

/**
 * The record as hashed: every field but `hash`, in a fixed order, as JSON. A field added later must be
 * appended here (and old records hashed without it), or every earlier record would read as altered.
 */
export function canonicalRecord(record: ChainedRecord): string {
  return JSON.stringify([
    String(record._id),
    record.seq,
    record.prevHash,
    iso(record.at),
    iso(record.startedAt),
    record.actorId ?? null,
    record.actorEmail ?? null,
    record.role ?? null,
    record.action,
    record.targetType ?? null,
    record.targetId ?? null,
    record.appId ?? null,
    record.ip ?? null,
    record.requestId ?? null,
    record.fields ?? [],
    record.outcome,
    record.status,
  ]);
}

/** SHA-256 of the previous record's hash and this record's canonical form. */
export function recordHash(record: ChainedRecord): string {
  return createHash('sha256').update(record.prevHash).update(canonicalRecord(record)).digest('hex');
}

export interface ChainBreak {
  seq: number;
  id: string;
  reason: string;
}

/**
 * Checks records in `seq` order and returns the first that does not hold, or null. The first record read is
 * the anchor: its `prevHash` names a record retention has deleted (or the genesis), so only its own hash is
 * checked; from there each must follow the one before it with no gap (docs/operations/audit-log.md).
 */
export class ChainCheck {
  private previous: { seq: number; hash: string } | null = null;
  checked = 0;

  next(record: AuditRecord): ChainBreak | null {
    const id = String(record._id);
    const previous = this.previous;
    this.checked += 1;
    if (previous && record.seq !== previous.seq + 1) {
      return { seq: record.seq, id, reason: `follows seq ${previous.seq}: record(s) missing in between` };
    }
    if (previous && record.prevHash !== previous.hash) {
      return { seq: record.seq, id, reason: 'prevHash is not the hash of the record before it' };
    }
    if (!previous && record.seq === 1 && record.prevHash !== GENESIS_HASH) {
      return { seq: record.seq, id, reason: 'the first record does not start from the genesis hash' };
    }
    if (recordHash(record) !== record.hash) {
      return { seq: record.seq, id, reason: 'its content does not match its hash (the record was altered)' };
    }
    this.previous = { seq: record.seq, hash: record.hash };
    return null;
  }
}
