// "fixloop: Run tests": the active test file, else a whole folder, in a cancellable notification; the
// server publishes what fails as diagnostics and answers with a summary, shown here.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LSPErrorCodes, ResponseError } from 'vscode-languageclient/node';
import { RunTestsArgs, SERVER_RUN_TESTS } from './protocol';
import { errorMessage } from './results';
import { ServerLifecycle } from './server';
import { folderUriOf, isTestFile, pickFolder } from './targets';

export class TestCommands {
  constructor(private readonly server: ServerLifecycle) {}

  /** "fixloop: Run tests": the active test file, else a whole folder. */
  async runTests(): Promise<void> {
    const client = await this.server.runningClient();
    if (!client) {
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const args: RunTestsArgs = {};
    let what: string;
    if (editor && isTestFile(editor.document)) {
      args.uri = editor.document.uri.toString();
      args.root = folderUriOf(editor.document.uri);
      what = vscode.workspace.asRelativePath(editor.document.uri);
    } else {
      const folder = await pickFolder(editor?.document.uri);
      if (!folder) {
        return;
      }
      args.root = folder.uri.toString();
      what = folder.name;
    }
    try {
      const result: unknown = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `fixloop: running the tests of ${what}`, cancellable: true },
        (_progress, cancel) => client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_RUN_TESTS, arguments: [args] }, cancel),
      );
      const { text, failed } = describeTestRun(result);
      void (failed ? vscode.window.showErrorMessage(`fixloop: ${text}`) : vscode.window.showInformationMessage(`fixloop: ${text}`));
    } catch (error) {
      if (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled) {
        return;
      }
      void vscode.window.showErrorMessage(`fixloop: running the tests failed: ${errorMessage(error)}`);
    }
  }
}

/** The server's answer to runTests in one line; `failed` when the run itself could not be done. */
function describeTestRun(result: unknown): { text: string; failed: boolean } {
  if (typeof result === 'object' && result !== null) {
    const r = result as Record<string, unknown>;
    const failed = r.status === 'error';
    if (typeof r.summary === 'string' && r.summary) {
      return { text: r.summary, failed };
    }
    const failing = Array.isArray(r.failed) ? r.failed.length : r.failed;
    const passed = Array.isArray(r.passed) ? r.passed.length : r.passed;
    if (typeof failing === 'number' || typeof passed === 'number') {
      return { text: `${passed ?? 0} passed, ${failing ?? 0} failed`, failed };
    }
  }
  return { text: `tests ran: ${JSON.stringify(result)}`, failed: false };
}
