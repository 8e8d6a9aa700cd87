import { analyseCoverage, type CoverageReport, formatReport } from './index-coverage';
import { INDEX_COVERAGE_ALLOW_LIST } from './index-coverage-allow-list';
import { readRecordings } from './query-shape-records';

export interface GateResult {
  report: CoverageReport;
  /** Recording files read: none means no test sent a query (a run of unit tests only). */
  files: number;
  lines: string[];
  uncovered: number;
}

/** The recorded shapes of one run judged against the declared indexes and the allow-list. */
export function judgeRun(dir: string): GateResult {
  const recordings = readRecordings(dir);
  const report = analyseCoverage(recordings.shapes, recordings.indexes, INDEX_COVERAGE_ALLOW_LIST);
  return {
    report,
    files: recordings.files,
    lines: formatReport(report),
    uncovered: report.shapes.filter(({ verdict }) => verdict.kind === 'uncovered').length,
  };
}
