// The pytest node id of a Test Explorer item, relative to its workspace folder: from the item's id when
// that is a node id (the Python extension's are, often with an absolute path), else from the labels of
// the item and its enclosing classes. No runtime `vscode` import, so node:test covers it.
import { isAbsolute, relative, sep } from 'node:path';

/** The parts of a `vscode.TestItem` used here. */
export interface TestItemLike {
  readonly id: string;
  readonly label: string;
  readonly uri?: { readonly fsPath: string; toString(): string } | undefined;
  readonly range?: unknown;
  readonly parent?: TestItemLike | undefined;
}

/** `file` relative to `folder` with forward slashes; undefined when it lies outside. */
export function relativeFile(folder: string, file: string): string | undefined {
  const rel = relative(folder, file);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) {
    return undefined;
  }
  return rel.split(sep).join('/');
}

/**
 * "tests/test_calc.py::TestAdd::test_add[1]" for a test (or class) item in a Python file under `folder`;
 * undefined for a file or folder item (no range), or an item outside `folder`.
 */
export function nodeIdOf(item: TestItemLike, folder: string): string | undefined {
  if (!item.uri || item.range === undefined) {
    return undefined;
  }
  const file = relativeFile(folder, item.uri.fsPath);
  if (!file?.endsWith('.py')) {
    return undefined;
  }
  const at = item.id.indexOf('::');
  if (at >= 0) {
    return `${file}${item.id.slice(at)}`;
  }
  const names = [item.label];
  const fileUri = item.uri.toString();
  for (let parent = item.parent; parent && parent.range !== undefined && parent.uri?.toString() === fileUri; parent = parent.parent) {
    names.unshift(parent.label);
  }
  return [file, ...names].join('::');
}
