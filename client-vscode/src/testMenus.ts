// What "Fix with fixloop" fixes when it comes from a menu: a Test Explorer item (testing/item/context),
// a failure message in the test results (testing/message/context), or the editor's context menu.
import * as vscode from 'vscode';
import { FixTarget } from './protocol';
import { nodeIdOf, TestItemLike } from './testItemIds';

function isTestItem(value: unknown): value is vscode.TestItem {
  return typeof value === 'object' && value !== null && 'id' in value && 'label' in value && 'children' in value;
}

/** testing/message/context passes `{test, message}` (`test` is absent once the item is gone). */
function isMessageArgs(value: unknown): value is { test?: vscode.TestItem; message: vscode.TestMessage } {
  return typeof value === 'object' && value !== null && 'message' in value;
}

/**
 * The target of a menu invocation: a test item becomes `{testId, root}` (a file item `{uri, root}`), a
 * message without its item becomes `{uri, position, root}` from the message's location; 'not python'
 * when the item is no pytest test in an open folder; undefined for the editor menu and the palette
 * (the caller then takes the test under the cursor).
 */
export function targetFromMenu(args: unknown[]): FixTarget | 'not python' | undefined {
  const [first] = args;
  if (isTestItem(first)) {
    return targetOfItem(first);
  }
  if (isMessageArgs(first)) {
    if (first.test) {
      return targetOfItem(first.test);
    }
    const location = first.message.location;
    const folder = location && vscode.workspace.getWorkspaceFolder(location.uri);
    if (!location || !folder || !location.uri.fsPath.endsWith('.py')) {
      return 'not python';
    }
    const { line, character } = location.range.start;
    return { uri: location.uri.toString(), position: { line, character }, root: folder.uri.toString() };
  }
  return undefined;
}

function targetOfItem(item: vscode.TestItem): FixTarget | 'not python' {
  const folder = item.uri && vscode.workspace.getWorkspaceFolder(item.uri);
  if (!item.uri || !folder || !item.uri.fsPath.endsWith('.py')) {
    return 'not python';
  }
  const root = folder.uri.toString();
  const testId = nodeIdOf(item as TestItemLike, folder.uri.fsPath);
  return testId ? { testId, root } : { uri: item.uri.toString(), root };
}
