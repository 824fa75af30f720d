// `npm run lint:size` (and `npm test` before it builds): no hand-written source file over MAX_FILE_LINES lines, no
// function over MAX_FUNCTION_LINES. Small files and functions are what a reader can hold at once; a limit that a
// check enforces stays a limit. Generated files are not ours to split (codegen.yml writes them).
//
//   node test/helpers/check-sizes.mjs          fails listing what is over and not in the allow-list
//   node test/helpers/check-sizes.mjs --all    lists everything over, allowed or not (exit code as above)
//   ... --count-suites                         also counts the bodies of describe('…', () => { … }) as functions
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 80;
const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['src', 'resolvers', 'rest-shim', 'migrations', 'web/src', 'test'];
const SOURCE_EXTENSIONS = /\.(ts|tsx|mts|cts|js|mjs|cjs|css)$/;
const SCRIPT_EXTENSIONS = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const ALLOWLIST = 'test/helpers/size-allowlist.json';

/** Paths (relative, with slashes) that codegen.yml generates: the keys under `generates:`; a key ending in `/` is a folder. */
function generatedPaths() {
  const text = readFileSync(path.join(ROOT, 'codegen.yml'), 'utf8');
  const section = text.split(/^generates:\s*$/m)[1] ?? '';
  return [...section.matchAll(/^ {2}([^\s#][^:]*):\s*$/gm)].map((match) => match[1].trim());
}

function isGenerated(file, generated) {
  return generated.some((target) => (target.endsWith('/') ? file.startsWith(target) : file === target));
}

function sourceFiles() {
  const generated = generatedPaths();
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(relative);
      } else if (SOURCE_EXTENSIONS.test(entry.name) && !entry.name.endsWith('.d.ts') && !isGenerated(relative, generated)) {
        files.push(relative);
      }
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(path.join(ROOT, dir))) walk(dir);
  return files.sort();
}

function lineCount(text) {
  if (text.length === 0) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const short = (text, max = 60) => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** A name a reader can find the function by: its own, the variable or property holding it, or the call it is passed to. */
function functionName(node, source) {
  const own = node.name ? node.name.getText(source) : undefined;
  if (ts.isFunctionDeclaration(node)) return `function ${own ?? '(default)'}`;
  if (ts.isConstructorDeclaration(node) || ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) {
    const owner = node.parent && 'name' in node.parent && node.parent.name ? node.parent.name.getText(source) : '(anonymous class)';
    return `${owner}.${ts.isConstructorDeclaration(node) ? 'constructor' : own}`;
  }
  if (own) return `function ${own}`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  if (ts.isCallExpression(parent)) {
    const [first] = parent.arguments;
    const label = first && first !== node && (ts.isStringLiteralLike(first) || ts.isTemplateExpression(first)) ? short(first.getText(source)) : '';
    return `${short(parent.expression.getText(source), 40)}(${label}) callback`;
  }
  return `anonymous ${ts.SyntaxKind[node.kind]}`;
}

/** The identifier a call starts from: `describe` for describe('…'), describe.skip('…') and describe.each(rows)('…'). */
function calleeRoot(expression) {
  let current = expression;
  while (ts.isCallExpression(current) || ts.isPropertyAccessExpression(current)) current = current.expression;
  return ts.isIdentifier(current) ? current.text : undefined;
}

/**
 * A suite's body (the callback given to vitest's describe): a list of tests, not a function a reader follows line
 * by line, so it is bounded by the file's limit rather than the function's. `--count-suites` counts them too.
 */
function isSuiteBody(node) {
  const parent = node.parent;
  return ts.isCallExpression(parent) && parent.arguments.includes(node) && SUITE_CALLS.has(calleeRoot(parent.expression));
}
const SUITE_CALLS = new Set(['describe', 'suite']);
const countSuites = process.argv.includes('--count-suites');

const FUNCTION_KINDS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/** Every function in the file with more than MAX_FUNCTION_LINES lines, first line to last line of the node. */
function longFunctions(file, text) {
  const kind = file.endsWith('x') ? ts.ScriptKind.TSX : file.match(/\.[cm]?js$/) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const seen = new Map();
  const visit = (node) => {
    if (FUNCTION_KINDS.has(node.kind) && 'body' in node && node.body && (countSuites || !isSuiteBody(node))) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      const lines = last - first + 1;
      if (lines > MAX_FUNCTION_LINES) {
        const name = functionName(node, source);
        const nth = (seen.get(name) ?? 0) + 1;
        seen.set(name, nth);
        found.push({ file, line: first, lines, key: `${file}: ${nth > 1 ? `${name} #${nth}` : name}` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function measure() {
  const files = [];
  const functions = [];
  for (const file of sourceFiles()) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const lines = lineCount(text);
    if (lines > MAX_FILE_LINES) files.push({ file, lines, key: file });
    if (SCRIPT_EXTENSIONS.test(file)) functions.push(...longFunctions(file, text));
  }
  return { files, functions };
}

function readAllowlist() {
  const file = path.join(ROOT, ALLOWLIST);
  if (!existsSync(file)) return { files: [], functions: [] };
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  return { files: parsed.files ?? [], functions: parsed.functions ?? [] };
}

function main() {
  const showAll = process.argv.includes('--all');
  const allow = readAllowlist();
  const allowed = { files: new Set(allow.files), functions: new Set(allow.functions) };
  const { files, functions } = measure();
  const newFiles = files.filter((f) => !allowed.files.has(f.key));
  const newFunctions = functions.filter((f) => !allowed.functions.has(f.key));
  const shownFiles = showAll ? files : newFiles;
  const shownFunctions = showAll ? functions : newFunctions;
  const out = [];
  if (shownFiles.length) {
    out.push(`Files over ${MAX_FILE_LINES} lines (${shownFiles.length}):`);
    for (const f of shownFiles) out.push(`  ${f.file}  ${f.lines} lines${allowed.files.has(f.key) ? '  (allowed for now)' : ''}`);
  }
  if (shownFunctions.length) {
    out.push(`Functions over ${MAX_FUNCTION_LINES} lines (${shownFunctions.length}):`);
    for (const f of shownFunctions) out.push(`  ${f.file}:${f.line}  ${f.key.slice(f.file.length + 2)}  ${f.lines} lines${allowed.functions.has(f.key) ? '  (allowed for now)' : ''}`);
  }
  const stale = [
    ...allow.files.filter((key) => !files.some((f) => f.key === key)),
    ...allow.functions.filter((key) => !functions.some((f) => f.key === key)),
  ];
  if (stale.length) out.push(`In ${ALLOWLIST} but no longer over (remove them):`, ...stale.map((key) => `  ${key}`));
  const allowedCount = files.length - newFiles.length + functions.length - newFunctions.length;
  if (allowedCount && !showAll) out.push(`${allowedCount} more over the limits are allowed for now by ${ALLOWLIST} (--all lists them).`);
  const failed = newFiles.length + newFunctions.length > 0;
  out.push(failed ? `Sizes: ${newFiles.length + newFunctions.length} over the limits; split them (or, for now, list them in ${ALLOWLIST}).` : `Sizes: no file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}, outside ${ALLOWLIST}.`);
  (failed ? process.stderr : process.stdout).write(`${out.join('\n')}\n`);
  if (failed) process.exitCode = 1;
}

if (import.meta.filename === process.argv[1] || path.resolve(process.argv[1] ?? '') === import.meta.filename) main();
