/**
 * A readable summary of one schemathesis run: figures from its console output, and the failures of its JUnit
 * report grouped by kind (server errors, response-schema violations, undocumented status codes, other), each
 * check with a few example requests to reproduce.
 */
import { readFileSync } from 'node:fs';

/** schemathesis's failure codes (`st explain <code>`), by the kind the summary groups them under. */
const KINDS: { title: string; codes: string[] }[] = [
  { title: 'Server errors (5xx)', codes: ['ST101', 'ST102'] },
  {
    title: 'Response violates the documented schema or content type',
    codes: ['ST104', 'ST105', 'ST106', 'ST107', 'ST108', 'ST109', 'ST110', 'ST111'],
  },
  { title: 'Undocumented status codes', codes: ['ST103'] },
];
const OTHER = 'Other checks';
const EXAMPLES_PER_CHECK = 3;

interface Finding {
  code: string;
  title: string;
  operation: string;
  /** The check's explanation, the response status line and the reproducing curl command. */
  detail: string;
  status: string;
  curl: string;
}

export interface Summary {
  markdown: string;
  headline: string;
  /** Failing checks (a test case failing two checks counts twice); tool errors count too. */
  failures: number;
  /**
   * What the gate refuses: server errors, responses that break the document, undocumented status codes.
   * The other checks (a valid-looking request refused, 404 instead of 405, …) and schemathesis's own
   * crashes are reported in the summary without failing the run.
   */
  gatingFailures: number;
  /** Whether schemathesis printed its closing line (false: killed, crashed or interrupted). */
  completed: boolean;
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&amp;/g, '&');
}

/** One finding per "- STnnn Title" item of each failing test case of the JUnit report. */
function parseJunit(xml: string): { findings: Finding[]; errors: { operation: string; message: string }[] } {
  const findings: Finding[] = [];
  const errors: { operation: string; message: string }[] = [];
  for (const testcase of xml.matchAll(/<testcase name="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const operation = unescapeXml(testcase[1]);
    const content = testcase[2] ?? '';
    for (const failure of content.matchAll(/<failure[^>]*>([\s\S]*?)<\/failure>/g)) {
      const body = unescapeXml(failure[1]);
      const status = /^\[(\d{3})\][^\n]*/m.exec(body)?.[0] ?? '';
      const curl = /Reproduce with:\s*\n\s*\n\s*(.+)/.exec(body)?.[1]?.trim() ?? '';
      for (const item of body.matchAll(
        /^- (ST\d{3}) ([^\n]+)\n([\s\S]*?)(?=^- ST\d{3} |^\[\d{3}\]|^Reproduce with:|(?![\s\S]))/gm,
      )) {
        findings.push({
          code: item[1],
          title: item[2].trim(),
          operation,
          detail: item[3].trim(),
          status,
          curl,
        });
      }
    }
    for (const error of content.matchAll(/<error[^>]*>([\s\S]*?)<\/error>/g)) {
      const message = unescapeXml(error[1])
        .split('\n')
        .find((line) => line.trim() && !/^Runtime Error$/.test(line));
      errors.push({ operation, message: (message ?? 'error').trim().slice(0, 200) });
    }
  }
  return { findings, errors };
}

function kindOf(code: string): string {
  return KINDS.find((kind) => kind.codes.includes(code))?.title ?? OTHER;
}

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

/** `schemathesis.log` is the console output; `junit.xml` the JUnit report. */
export function summarize(consoleLog: string, junitFile: string, title: string): Summary {
  const output = readFileSync(consoleLog, 'utf8');
  const tested = /Tested:\s+(\d+)/.exec(output)?.[1] ?? '?';
  const selected = /Selected:\s+(\d+\/\d+)/.exec(output)?.[1] ?? '?';
  const cases = /Test cases:\s*\n\s*([^\n]+)/.exec(output)?.[1]?.trim() ?? 'unknown (run interrupted?)';
  const closing = /^=+ (.+ in [\d.]+s) =+$/m.exec(output)?.[1] ?? 'no closing line (run interrupted?)';
  const { findings, errors } = parseJunit(readFileSync(junitFile, 'utf8'));

  const lines = [
    `# ${title}`,
    '',
    `- Operations: ${tested} tested (${selected} selected)`,
    `- Test cases: ${cases}`,
    `- Result: ${closing}`,
    `- Failing checks: ${findings.length}; tool errors: ${errors.length}`,
    '',
    'Reproduce a case with the curl line (add the `Authorization` / `X-API-Key` headers the report filters',
    "out), or `.venv-fuzz/bin/st replay <Test Case ID>` from artifacts/fuzz/. A 500's errorId is in server.log.",
    '',
  ];
  const headline: string[] = [];
  for (const kind of [...KINDS.map((k) => k.title), OTHER]) {
    const ofKind = findings.filter((finding) => kindOf(finding.code) === kind);
    headline.push(`${kind}: ${ofKind.length}`);
    lines.push(`## ${kind}: ${ofKind.length}`, '');
    const codes = [...new Set(ofKind.map((finding) => finding.code))].sort();
    for (const code of codes) {
      const ofCode = ofKind.filter((finding) => finding.code === code);
      const operations = [...new Set(ofCode.map((finding) => finding.operation))];
      lines.push(`### ${code} ${ofCode[0].title}: ${ofCode.length} (${operations.length} operations)`, '');
      lines.push(`Operations: ${operations.map((operation) => `\`${operation}\``).join(', ')}`, '');
      for (const example of ofCode.slice(0, EXAMPLES_PER_CHECK)) {
        lines.push(`- \`${example.operation}\` → ${example.status || 'no response'}`);
        const detail = example.detail
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean)
          .join(' / ');
        if (detail) lines.push(`  ${clip(detail, 400)}`);
        if (example.curl) lines.push('', '  ```sh', `  ${clip(example.curl, 600)}`, '  ```');
      }
      lines.push('');
    }
  }
  if (errors.length) {
    lines.push(`## Tool errors (schemathesis itself): ${errors.length}`, '');
    for (const error of errors) lines.push(`- \`${error.operation}\`: ${error.message}`);
    lines.push('');
  }
  return {
    markdown: lines.join('\n'),
    headline: `${findings.length} failing checks (${headline.join('; ')}); ${errors.length} tool errors; test cases: ${cases}`,
    failures: findings.length + errors.length,
    gatingFailures: findings.filter((finding) => kindOf(finding.code) !== OTHER).length,
    completed: /^=+ (.+ in [\d.]+s) =+$/m.test(output),
  };
}
