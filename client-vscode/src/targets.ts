// Picks what "Fix failing test" fixes: the test under the cursor, else one of the known failing tests.
import * as vscode from 'vscode';
import { FixTarget } from './protocol';

const TEST_DEF = /^(\s*)(?:async\s+)?def\s+(test\w*)\s*\(/;

export interface FailingTest {
  testId: string;
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
        found.push({ testId, uri, range: diagnostic.range, message: diagnostic.message });
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
    if (onLine?.id) {
      return { testId: onLine.id };
    }
    const defLine = enclosingTestLine(editor.document, cursor);
    if (defLine !== undefined) {
      return {
        uri: editor.document.uri.toString(),
        position: { line: cursor.line, character: cursor.character },
      };
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
    return { testId: failing[0]!.testId };
  }
  const choice = await vscode.window.showQuickPick(
    failing.map((t) => ({ label: t.testId, detail: t.message.split('\n')[0], testId: t.testId })),
    { title: 'fixloop: fix which failing test?', matchOnDetail: true },
  );
  return choice ? { testId: choice.testId } : undefined;
}
