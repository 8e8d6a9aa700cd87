import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CoverageIndex } from './index-coverage';
import { describeShape, type QueryShape } from './query-shape';

/** One line of a recording file: a shape first seen, or a collection's declared indexes. */
export type QueryShapeRecord = { shape: QueryShape } | { indexes: CoverageIndex[]; collection: string };

/** The environment variable naming the directory recordings go to; unset, nothing is recorded. */
export const QUERY_SHAPES_DIR_VARIABLE = 'QUERY_SHAPES_DIR';

export const RECORDING_SUFFIX = '.jsonl';

export interface Recordings {
  shapes: QueryShape[];
  indexes: CoverageIndex[];
  files: number;
}

const indexId = (index: CoverageIndex) => `${index.collection} ${JSON.stringify(index.key)}`;

/**
 * Every recording file of a directory merged: each shape once, each collection's declared indexes once
 * (all processes run the same schemas). A line cut short by a killed process is skipped.
 */
export function readRecordings(dir: string): Recordings {
  const shapes = new Map<string, QueryShape>();
  const indexes = new Map<string, CoverageIndex>();
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(RECORDING_SUFFIX)) : [];
  for (const name of files) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      let record: QueryShapeRecord;
      try {
        record = JSON.parse(line) as QueryShapeRecord;
      } catch {
        continue;
      }
      if ('shape' in record) shapes.set(describeShape(record.shape), record.shape);
      else for (const index of record.indexes) indexes.set(indexId(index), index);
    }
  }
  return { shapes: [...shapes.values()], indexes: [...indexes.values()], files: files.length };
}

/** Where test runs record, one directory per run, under the project's git-ignored `.data/`. */
export const RECORDINGS_ROOT = join('.data', 'query-shapes');
/** Runs older than this are removed when a new one starts; younger ones may still be running. */
const STALE_RUN_MS = 6 * 60 * 60_000;

/** A fresh directory for this run's recordings; other runs' old directories are removed. */
export function startRun(root: string): string {
  mkdirSync(root, { recursive: true });
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (Date.now() - statSync(path).mtimeMs > STALE_RUN_MS) rmSync(path, { recursive: true, force: true });
  }
  const dir = join(root, `run-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`);
  mkdirSync(dir);
  return dir;
}

/** The most recently started run's directory, if any. */
export function latestRun(root: string): string | undefined {
  if (!existsSync(root)) return undefined;
  // Run names start with their ISO start time, so name order is start order.
  const runs = readdirSync(root)
    .filter((name) => name.startsWith('run-'))
    .sort();
  return runs.length ? join(root, runs[runs.length - 1]) : undefined;
}
