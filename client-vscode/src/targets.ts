// Picks what "Fix failing test" fixes: the test under the cursor, else one of the known failing tests;
// every target carries its workspace folder as `root` (multi-root workspaces, CONTRACT.md).
import * as vscode from 'vscode';
import { FixTarget } from './protocol';

const TEST_DEF = /^(\s*)(?:async\s+)?def\s+(test\w*)\s*\(/;
const TEST_FILE = /(^|[\\/])(test_[^\\/]*|[^\\/]*_test)\.py$/;

/** The workspace folder holding `uri`, as the `root` the server expects; undefined outside every folder. */
export function folderUriOf(uri: vscode.Uri): string | undefined {
  return vscode.workspace.getWorkspaceFolder(uri)?.uri.toString();
}

/** A pytest test file by name (test_*.py or *_test.py) in Python. */
export function isTestFile(document: vscode.TextDocument): boolean {
  return document.languageId === 'python' && TEST_FILE.test(document.fileName);
}

/** The folder of `uri`; else the only folder; else the one the user picks (undefined: none or dismissed). */
export async function pickFolder(uri: vscode.Uri | undefined): Promise<vscode.WorkspaceFolder | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const holding = uri && vscode.workspace.getWorkspaceFolder(uri);
  if (holding) {
    return holding;
  }
  if (folders.length <= 1) {
    if (!folders.length) {
      void vscode.window.showInformationMessage('fixloop: open the project folder first.');
    }
    return folders[0];
  }
  return vscode.window.showWorkspaceFolderPick({ placeHolder: 'fixloop: run the tests of which folder?' });
}

export interface FailingTest {
  testId: string;
  root: string | undefined;
  uri: vscode.Uri;
  range: vscode.Range;
  message: string;
}

/** Failing tests from fixloop's diagnostics (source "fixloop", data.testId), across the workspace. */
export function knownFailingTests(): FailingTest[] {
  const found: FailingTest[] = [];
  for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
    for (const diagnostic of diagnostics) {
      const testId = testIdOf(diagnostic);
      if (testId) {
        found.push({ testId, root: folderUriOf(uri), uri, range: diagnostic.range, message: diagnostic.message });
      }
    }
  }
  return found;
}

export function testIdOf(diagnostic: vscode.Diagnostic): string | undefined {
  if (diagnostic.source !== 'fixloop') {
    return undefined;
  }
  // vscode-languageclient keeps the LSP `data` field on the converted diagnostic
  const data = (diagnostic as vscode.Diagnostic & { data?: unknown }).data;
  if (typeof data === 'object' && data !== null && typeof (data as { testId?: unknown }).testId === 'string') {
    return (data as { testId: string }).testId;
  }
  return undefined;
}

/** The name of the test function defined on `line` ("test_add"). */
export function testNameAt(document: vscode.TextDocument, line: number): string | undefined {
  return TEST_DEF.exec(document.lineAt(line).text)?.[2];
}

/** The `def test_*` enclosing the cursor, if the cursor is inside one. */
export function enclosingTestLine(document: vscode.TextDocument, position: vscode.Position): number | undefined {
  for (let line = position.line; line >= 0; line--) {
    const text = document.lineAt(line).text;
    const match = TEST_DEF.exec(text);
    if (match) {
      return line;
    }
    // a line less indented than the body we started in, and not a decorator/blank: left the function
    if (line < position.line && /^\S/.test(text) && !text.startsWith('@') && !text.startsWith('#')) {
      return undefined;
    }
  }
  return undefined;
}

/** The test under the cursor; else a failing test of the active file or workspace (quick pick when several). */
export async function pickFixTarget(editor: vscode.TextEditor | undefined): Promise<FixTarget | undefined> {
  if (editor && editor.document.languageId === 'python') {
    const cursor = editor.selection.active;
    const onLine = vscode.languages
      .getDiagnostics(editor.document.uri)
      .map((d) => ({ d, id: testIdOf(d) }))
      .find(({ d, id }) => id && d.range.start.line <= cursor.line && cursor.line <= d.range.end.line);
    const root = folderUriOf(editor.document.uri);
    if (onLine?.id) {
      return withRoot({ testId: onLine.id }, root);
    }
    const defLine = enclosingTestLine(editor.document, cursor);
    if (defLine !== undefined) {
      return withRoot(
        { uri: editor.document.uri.toString(), position: { line: cursor.line, character: cursor.character } },
        root,
      );
    }
  }
  const failing = knownFailingTests();
  if (failing.length === 0) {
    void vscode.window.showInformationMessage(
      'fixloop: no failing test known. Put the cursor in a test function, or run "fixloop: Run tests" first.',
    );
    return undefined;
  }
  if (failing.length === 1) {
    return withRoot({ testId: failing[0]!.testId }, failing[0]!.root);
  }
  const multiRoot = (vscode.workspace.workspaceFolders?.length ?? 0) > 1;
  const choice = await vscode.window.showQuickPick(
    failing.map((t) => ({
      label: t.testId,
      description: multiRoot && t.root ? vscode.workspace.getWorkspaceFolder(t.uri)?.name : undefined,
      detail: t.message.split('\n')[0],
      test: t,
    })),
    { title: 'fixloop: fix which failing test?', matchOnDetail: true },
  );
  return choice ? withRoot({ testId: choice.test.testId }, choice.test.root) : undefined;
}

function withRoot(target: FixTarget, root: string | undefined): FixTarget {
  return root ? { ...target, root } : target;
}

/** The name of the test function around `{uri, position}` when that document is open. */
export function cursorTestName(target: FixTarget): string | undefined {
  if (!('uri' in target) || !target.position) {
    return undefined;
  }
  const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.uri);
  if (!document || target.position.line >= document.lineCount) {
    return undefined;
  }
  const line = enclosingTestLine(document, new vscode.Position(target.position.line, target.position.character));
  return line === undefined ? undefined : testNameAt(document, line);
}
