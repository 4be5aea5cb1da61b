// The fix flow: from a command (palette, code lens, Test Explorer, editor menu) to a running fix in a
// cancellable notification that streams the model's thoughts, then to the result; also Run tests and Cancel.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LSPErrorCodes,
  MessageType,
  ResponseError,
  ShowMessageParams,
  WorkDoneProgress,
  WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { oneLine, ProgressLine } from './progressLine';
import {
  FixResult,
  FixTarget,
  isFixResult,
  RunTestsArgs,
  SERVER_CANCEL,
  SERVER_FIX,
  SERVER_RUN_TESTS,
  SERVER_TRY_ANOTHER,
  shortTestName,
  TryAnotherArgs,
} from './protocol';
import { errorMessage, ResultsView } from './results';
import { ServerLifecycle } from './server';
import { FixloopStatus } from './status';
import { cursorTestName, folderUriOf, isTestFile, pickFixTarget, pickFolder } from './targets';
import { targetFromMenu } from './testMenus';

// The server announces each fix's outcome with window/showMessage for clients that render nothing
// themselves; during our own runs the result toast (with Undo) says the same, so these are not repeated.
const SERVER_RESULT_PREFIXES = ['fixloop: fixed ', 'fixloop: found a fix for ', 'fixloop: cancelled the fix of ', 'fixloop: could not fix '];

export class FixFlow {
  private readonly activeRuns = new Map<string, string>(); // progress token -> label
  private readonly serverToasts = new Set<string>(); // server messages shown during the current runs
  private quietResultsUntil = 0; // a cancelled request is answered before the server's own message

  constructor(
    private readonly server: ServerLifecycle,
    private readonly results: ResultsView,
    private readonly status: FixloopStatus,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.results.onTryAnother = (result) => void this.tryAnotherFix(result);
  }

  /** "fixloop: Fix failing test": the test under the cursor, else a known failing test. */
  async fixFailingTest(): Promise<FixResult | undefined> {
    if (!(await this.server.runningClient())) {
      return undefined;
    }
    const target = await pickFixTarget(vscode.window.activeTextEditor);
    return target ? this.runFix(target) : undefined;
  }

  /** "Fix with fixloop" from the Test Explorer (a test item or a failure message) or the editor menu. */
  async fixFromMenu(...args: unknown[]): Promise<FixResult | undefined> {
    if (!(await this.server.runningClient())) {
      return undefined;
    }
    const fromMenu = targetFromMenu(args);
    if (fromMenu === 'not python') {
      void vscode.window.showWarningMessage('fixloop: fixloop fixes pytest tests; this test is not in a Python file of an open folder.');
      return undefined;
    }
    const target = fromMenu ?? (await pickFixTarget(vscode.window.activeTextEditor));
    return target ? this.runFix(target) : undefined;
  }

  /**
   * "fixloop: Try another fix" (and the button after a discarded or undone fix): goes on with that run,
   * telling the model its fix was rejected and, if the user says, why.
   */
  async tryAnotherFix(rejected?: FixResult): Promise<FixResult | undefined> {
    const last = rejected ?? this.results.lastFix();
    if (!last?.runId || last.status !== 'fixed') {
      void vscode.window.showInformationMessage('fixloop: no fix to try again; "Try another fix" follows a fix you discarded or undid.');
      return undefined;
    }
    if (!(await this.server.runningClient())) {
      return undefined;
    }
    const reason = await vscode.window.showInputBox({
      title: 'fixloop: try another fix',
      prompt: 'What was wrong with the fix? (optional; Enter to go on without saying)',
      placeHolder: 'e.g. the function must keep returning None for an empty list',
      ignoreFocusOut: true,
    });
    if (reason === undefined) {
      return undefined; // Escape: no new run
    }
    const args: TryAnotherArgs = reason.trim() ? { runId: last.runId, reason: reason.trim() } : { runId: last.runId };
    const label = last.testIds.map(shortTestName).join(', ') || 'the test';
    return this.runCommand(SERVER_TRY_ANOTHER, args, `${label} (another fix)`, (error) => cancelledFor(last.testIds, error));
  }

  /** Runs fixloop.server.fixFailingTest with our own progress token in a cancellable notification. */
  async runFix(target: FixTarget): Promise<FixResult | undefined> {
    const label = 'testId' in target ? shortTestName(target.testId) : cursorTestName(target) ?? 'test under the cursor';
    return this.runCommand(SERVER_FIX, target, label, () => cancelledResult(target));
  }

  private async runCommand(
    command: string,
    argument: FixTarget | TryAnotherArgs,
    label: string,
    cancelled: (error: unknown) => FixResult,
  ): Promise<FixResult | undefined> {
    const client = this.server.current();
    if (!client) {
      return undefined;
    }
    const token = randomUUID();
    this.results.forgetEdit();
    this.activeRuns.set(token, label);
    this.status.setRunning([...this.activeRuns.values()]);
    let result: FixResult | undefined;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'fixloop', cancellable: true },
        (progress, cancel) => this.request(client, command, argument, token, label, progress, cancel, cancelled),
      );
    } catch (error) {
      this.log.error(`fix failed: ${String(error)}`);
      void vscode.window.showErrorMessage(`fixloop: the fix failed: ${errorMessage(error)}`);
      return undefined;
    } finally {
      this.activeRuns.delete(token);
      this.quietResultsUntil = Date.now() + 10_000;
      this.status.setRunning([...this.activeRuns.values()]);
    }
    if (result) {
      this.results.show(result, this.serverToasts);
    }
    if (this.activeRuns.size === 0) {
      this.serverToasts.clear();
    }
    return result;
  }

  private async request(
    client: LanguageClient,
    command: string,
    argument: FixTarget | TryAnotherArgs,
    token: string,
    label: string,
    progress: vscode.Progress<{ message?: string; increment?: number }>,
    cancel: vscode.CancellationToken,
    cancelled: (error: unknown) => FixResult,
  ): Promise<FixResult | undefined> {
    progress.report({ message: `fixing ${label}…` });
    let reported = 0;
    const view = new ProgressLine();
    const onProgress = client.onProgress(
      WorkDoneProgress.type,
      token,
      (value: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd) => {
        if (value.kind === 'end') {
          return;
        }
        const line = oneLine(value.kind === 'begin' ? value.message ?? value.title : value.message ?? '');
        const message = view.update(line);
        let increment: number | undefined;
        if (typeof value.percentage === 'number' && value.percentage > reported) {
          increment = value.percentage - reported;
          reported = value.percentage;
        }
        if (message || increment) {
          progress.report({ message: message || undefined, increment });
        }
        if (line) {
          this.log.info(`[${label}] ${line}`);
        }
      },
    );
    const onCancel = cancel.onCancellationRequested(() => {
      this.log.info(`[${label}] cancel requested`);
      void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    });
    try {
      const answer: unknown = await client.sendRequest(
        ExecuteCommandRequest.type,
        { command, arguments: [argument], workDoneToken: token },
        cancel,
      );
      return isFixResult(answer) ? answer : undefined;
    } catch (error) {
      if (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled) {
        return cancelled(error);
      }
      throw error;
    } finally {
      onProgress.dispose();
      onCancel.dispose();
    }
  }

  /** Middleware for code actions and lenses: their fixFailingTest gets the same notification. */
  runFixFromServerCommand(args: unknown[]): Promise<FixResult | undefined> {
    return this.runFix(args[0] as FixTarget);
  }

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
      void vscode.window.showInformationMessage(`fixloop: ${describeTestRun(result)}`);
    } catch (error) {
      if (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled) {
        return;
      }
      void vscode.window.showErrorMessage(`fixloop: running the tests failed: ${errorMessage(error)}`);
    }
  }

  /** "fixloop: Cancel the running fix" (and the language status item's Cancel). */
  async cancel(): Promise<void> {
    const client = this.server.current();
    if (!client || this.activeRuns.size === 0) {
      void vscode.window.showInformationMessage('fixloop: no run to cancel.');
      return;
    }
    for (const token of this.activeRuns.keys()) {
      void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    }
    await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_CANCEL, arguments: [{}] });
  }

  /** The server's window/showMessage, minus the result lines our own result toast repeats. */
  onServerMessage({ type, message }: ShowMessageParams): void {
    this.log.info(`server: ${message}`);
    const ours = this.activeRuns.size > 0 || Date.now() < this.quietResultsUntil;
    if (ours && SERVER_RESULT_PREFIXES.some((prefix) => message.startsWith(prefix))) {
      return;
    }
    if (this.activeRuns.size > 0) {
      this.serverToasts.add(message);
    }
    if (type === MessageType.Error) {
      void vscode.window.showErrorMessage(message);
    } else if (type === MessageType.Warning) {
      void vscode.window.showWarningMessage(message);
    } else {
      void vscode.window.showInformationMessage(message);
    }
  }
}

function cancelledResult(target: FixTarget): FixResult {
  return cancelledFor('testId' in target ? [target.testId] : []);
}

function cancelledFor(testIds: string[], _error?: unknown): FixResult {
  return {
    runId: '',
    status: 'cancelled',
    testIds,
    summary: 'cancelled',
    diff: '',
    files: [],
    applied: false,
    steps: 0,
    attempts: 0,
    seconds: 0,
    transcript: null,
  };
}

function describeTestRun(result: unknown): string {
  if (typeof result === 'object' && result !== null) {
    const r = result as Record<string, unknown>;
    if (typeof r.summary === 'string' && r.summary) {
      return r.summary;
    }
    const failed = Array.isArray(r.failed) ? r.failed.length : r.failed;
    const passed = Array.isArray(r.passed) ? r.passed.length : r.passed;
    if (typeof failed === 'number' || typeof passed === 'number') {
      return `${passed ?? 0} passed, ${failed ?? 0} failed`;
    }
  }
  return `tests ran: ${JSON.stringify(result)}`;
}
