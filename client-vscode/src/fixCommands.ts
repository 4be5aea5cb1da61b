// The fix commands: from a command (palette, code lens, Test Explorer, editor menu) to a running fix in a
// cancellable notification, then to the result; "Try another fix" after a rejected one; Cancel.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, WorkDoneProgressCancelNotification } from 'vscode-languageclient/node';
import { sendFixRequest } from './fixRequest';
import { FixResult, FixTarget, SERVER_CANCEL, SERVER_FIX, SERVER_TRY_ANOTHER, shortTestName, TryAnotherArgs } from './protocol';
import { errorMessage, ResultsView } from './results';
import { ServerLifecycle } from './server';
import { FixloopStatus } from './status';
import { cursorTestName, pickFixTarget } from './targets';
import { targetFromMenu } from './testMenus';

export class FixCommands {
  private readonly activeRuns = new Map<string, string>(); // progress token -> label

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
    return this.runCommand(SERVER_TRY_ANOTHER, args, `${label} (another fix)`, last.testIds);
  }

  /** Runs fixloop.server.fixFailingTest with our own progress token in a cancellable notification. */
  async runFix(target: FixTarget): Promise<FixResult | undefined> {
    const label = 'testId' in target ? shortTestName(target.testId) : cursorTestName(target) ?? 'test under the cursor';
    return this.runCommand(SERVER_FIX, target, label, 'testId' in target ? [target.testId] : []);
  }

  /** Middleware for code actions and lenses: their fixFailingTest gets the same notification. */
  runFixFromServerCommand(args: unknown[]): Promise<FixResult | undefined> {
    return this.runFix(args[0] as FixTarget);
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

  private async runCommand(
    command: string,
    argument: FixTarget | TryAnotherArgs,
    label: string,
    testIds: string[],
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
        (progress, cancel) =>
          sendFixRequest(client, { command, argument, token, label, cancelled: () => cancelledFor(testIds) }, progress, cancel, this.log),
      );
    } catch (error) {
      this.log.error(`fix failed: ${String(error)}`);
      void vscode.window.showErrorMessage(`fixloop: the fix failed: ${errorMessage(error)}`);
      return undefined;
    } finally {
      this.activeRuns.delete(token);
      this.status.setRunning([...this.activeRuns.values()]);
    }
    if (result) {
      this.results.show(result);
    }
    return result;
  }
}

/** What a fix the user cancelled answers (the server answers the cancelled request with an error). */
function cancelledFor(testIds: string[]): FixResult {
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
