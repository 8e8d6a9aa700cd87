// @ts-check
/**
 * `npm run lint`'s comment check: a comment cites the project's own pages by name (docs/<page>.md,
 * docs/decisions/<record>.md), never a document the reader does not have ("the spec", "issue 12", the
 * design notes, the former single decisions page). Reads the comments of src/ and test/ through TypeScript's
 * parser, so strings and test names are not comments. Exits 1 listing each hit as file:line.
 */
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');
const ts = require('typescript');

const ROOT = join(__dirname, '..');
const FORBIDDEN = /\b(the spec|issues? \d+|DESIGN\.md)\b|docs\/decisions\.md/i;

/** @param {string} dir @returns {string[]} */
function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.[cm]?[jt]s$/.test(name) ? [path] : [];
  });
}

/** Every comment of a file, as [start, end) offsets, found through the parsed tree. */
/** @param {string} text @returns {Array<[number, number]>} */
function commentRanges(text) {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false);
  /** @type {Map<number, number>} */
  const ranges = new Map();
  /** @param {import('typescript').Node} node */
  const visit = (node) => {
    for (const range of [
      ...(ts.getLeadingCommentRanges(text, node.pos) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.end) ?? []),
    ]) {
      ranges.set(range.pos, range.end);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  visit(source.endOfFileToken);
  return [...ranges];
}

/** @param {string} file @returns {string[]} */
function hits(file) {
  const text = readFileSync(file, 'utf8');
  return commentRanges(text).flatMap(([start, end]) =>
    text
      .slice(start, end)
      .split('\n')
      .flatMap((line, index) => {
        const match = FORBIDDEN.exec(line);
        if (!match) return [];
        const lineNumber = text.slice(0, start).split('\n').length + index;
        return [`${relative(ROOT, file)}:${lineNumber}: "${match[0]}" in a comment`];
      }),
  );
}

const problems = ['src', 'test'].flatMap((dir) => sources(join(ROOT, dir))).flatMap(hits);
if (problems.length > 0) {
  process.stderr.write(
    `${problems.join('\n')}\n${problems.length} comment(s) cite a document the reader does not have: ` +
      'cite docs/<page>.md or docs/decisions/<record>.md by name.\n',
  );
  process.exitCode = 1;
}
