// The fixloop VS Code extension: starts `fixloop serve`, adds the palette commands, shows runs as
// cancellable notifications with the model's thoughts, and reports each result with Undo.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  CancellationToken,
  CloseAction,
  CloseHandlerResult,
  CodeLensRequest,
  ErrorAction,
  ErrorHandlerResult,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  LSPErrorCodes,
  ResponseError,
  MessageType,
  ServerOptions,
  ShowMessageNotification,
  ShowMessageParams,
  State,
  WorkDoneProgress,
  WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { oneLine, ProgressLine } from './progressLine';
import { FixResult, FixTarget, isFixResult, SERVER_CANCEL, SERVER_FIX, SERVER_RUN_TESTS, shortTestName } from './protocol';
import { checkInstall, installCommand, resolveServerPython } from './serverPython';
import { enclosingTestLine, pickFixTarget, testNameAt } from './targets';
import { FileTraceChannel } from './traceFile';
import { loadTranscript } from './transcript';

const SECRET_KEY = 'fixloop.apiKey';
const TRANSCRIPT_SCHEME = 'fixloop-transcript';
// The server announces each fix's outcome with window/showMessage for clients that render nothing
// themselves; during our own runs the result toast (with Undo) says the same, so these are not repeated.
const SERVER_RESULT_PREFIXES = ['fixloop: fixed ', 'fixloop: found a fix for ', 'fixloop: cancelled the fix of ', 'fixloop: could not fix '];
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 3 * 60_000;

/** What one applied fix changed, so "Undo" can put the files back. */
interface AppliedEdit {
  before: Map<string, string | undefined>;
  after: Map<string, string>;
}

class FixloopExtension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly log: vscode.LogOutputChannel;
  private readonly trace: vscode.LogOutputChannel;
  private readonly status: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private clientDisposables: vscode.Disposable[] = []; // tied to the current client
  private readonly activeRuns = new Map<string, string>(); // progress token -> label
  private serverProblem: string | undefined;
  private lastResult: FixResult | undefined;
  private lastEdit: AppliedEdit | undefined;
  private restarts: number[] = [];
  private readonly serverToasts = new Set<string>(); // server messages shown during the current runs
  private quietResultsUntil = 0; // a cancelled request is answered before the server's own message
  private starting: Promise<void> | undefined;
  private readonly transcripts = new Map<string, string>(); // fixloop-transcript: uri -> Markdown
  private readonly transcriptChanged = new vscode.EventEmitter<vscode.Uri>();

  constructor(private readonly context: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('fixloop', { log: true });
    const traceFile = process.env.FIXLOOP_LSP_TRACE_FILE;
    this.trace = traceFile ? new FileTraceChannel('fixloop trace', traceFile) : this.log;
    this.status = vscode.window.createStatusBarItem('fixloop.status', vscode.StatusBarAlignment.Left, 50);
    this.status.name = 'fixloop';
    this.disposables.push(this.log, this.status);
    this.updateStatus();
    this.status.show();
  }

  registerCommands(): void {
    const register = (id: string, fn: (...args: unknown[]) => unknown) =>
      this.disposables.push(vscode.commands.registerCommand(id, fn));
    register('fixloop.fixFailingTest', () => this.fixFailingTest());
    register('fixloop.runTests', () => this.runTests());
    register('fixloop.cancel', () => this.cancel());
    register('fixloop.showTranscript', () => this.showTranscript());
    register('fixloop.restartServer', () => this.restart());
    register('fixloop.setApiKey', () => this.setApiKey());
    this.disposables.push(
      this.transcriptChanged,
      vscode.workspace.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, {
        onDidChange: this.transcriptChanged.event,
        provideTextDocumentContent: (uri) => this.transcripts.get(uri.toString()) ?? '',
      }),
    );
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('fixloop.serverPython')) {
          void this.restart();
        } else if (e.affectsConfiguration('fixloop.model')) {
          this.updateStatus();
        }
      }),
    );
  }

  // ---- server lifecycle --------------------------------------------------------------------

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const resource = vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const { python, source } = await resolveServerPython(resource);
    const check = await checkInstall(python, cwd);
    if (!check.ok) {
      // No client is started, so there is nothing to crash-loop: the user fixes the install and restarts.
      this.serverProblem = 'not installed';
      this.updateStatus();
      this.log.error(`fixloop is not importable with ${python} (from ${source}): ${check.detail}`);
      void this.showInstallHint(python, source);
      return;
    }
    this.serverProblem = undefined;
    const env: NodeJS.ProcessEnv = { ...process.env };
    const key = await this.context.secrets.get(SECRET_KEY);
    if (key) {
      env.FIXLOOP_API_KEY = key;
      const keyEnv = vscode.workspace.getConfiguration('fixloop').get<string>('apiKeyEnv', '');
      if (keyEnv) {
        env[keyEnv] = key;
      }
    }
    const serverOptions: ServerOptions = { command: python, args: check.serverArgs, options: { env, cwd } };
    this.log.info(`starting: ${python} ${check.serverArgs.join(' ')} (interpreter from ${source})`);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file', language: 'python' }],
      synchronize: { configurationSection: 'fixloop' },
      initializationOptions: serverSettings(),
      outputChannel: this.log,
      traceOutputChannel: this.trace,
      errorHandler: {
        error: (_error, _message, count): ErrorHandlerResult => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
        }),
        closed: (): CloseHandlerResult => this.onServerClosed(),
      },
      middleware: {
        executeCommand: (command, args, next) =>
          command === SERVER_FIX ? this.runFix(args[0] as FixTarget) : next(command, args),
        workspace: {
          handleApplyEdit: (params, next) => this.applyEdit(params, next),
        },
      },
    };
    const client = new LanguageClient('fixloop', 'fixloop', serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client) {
        this.updateStatus();
      }
    });
    client.onNotification(ShowMessageNotification.type, (message) => this.onServerMessage(message));
    // Lenses sit on failing tests, which change when diagnostics do; without this VS Code asks for
    // lenses again only when the document is edited.
    this.clientDisposables.forEach((d) => d.dispose());
    this.clientDisposables = [
      vscode.languages.onDidChangeDiagnostics((event) => {
        if (this.client !== client || !client.isRunning()) {
          return;
        }
        const lenses = client.getFeature(CodeLensRequest.method);
        for (const uri of event.uris) {
          const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
          if (document?.languageId === 'python') {
            lenses.getProvider(document)?.onDidChangeCodeLensEmitter.fire();
          }
        }
      }),
    ];
    try {
      await client.start();
    } catch (error) {
      this.serverProblem = 'failed to start';
      this.log.error(`the server failed to start: ${String(error)}`);
      void vscode.window.showErrorMessage(
        `fixloop: the server failed to start (${python} ${check.serverArgs.join(' ')}). See the "fixloop" output.`,
      );
    }
    this.updateStatus();
  }

  private onServerMessage({ type, message }: ShowMessageParams): void {
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

  private onServerClosed(): CloseHandlerResult {
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    this.restarts.push(now);
    if (this.restarts.length > MAX_RESTARTS) {
      this.serverProblem = 'stopped';
      this.updateStatus();
      return {
        action: CloseAction.DoNotRestart,
        message: `fixloop: the server stopped ${MAX_RESTARTS + 1} times in 3 minutes and will not be restarted. See the "fixloop" output, then run "fixloop: Restart server".`,
      };
    }
    return { action: CloseAction.Restart };
  }

  private async showInstallHint(python: string, source: string): Promise<void> {
    const command = installCommand(python);
    const copy = 'Copy install command';
    const settings = 'Choose interpreter';
    const choice = await vscode.window.showErrorMessage(
      `fixloop is not installed for ${python} (${source}). Install it with: ${command}`,
      copy,
      settings,
    );
    if (choice === copy) {
      await vscode.env.clipboard.writeText(command);
    } else if (choice === settings) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'fixloop.serverPython');
    }
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    this.restarts = [];
    if (old) {
      try {
        await old.stop(5_000);
      } catch (error) {
        this.log.warn(`stopping the old server: ${String(error)}`);
      }
    }
    await this.start();
  }

  private runningClient(): LanguageClient | undefined {
    if (this.client?.isRunning()) {
      return this.client;
    }
    const why = this.serverProblem ?? 'not running';
    void vscode.window.showWarningMessage(`fixloop: the server is ${why}. Run "fixloop: Restart server" once it is fixed.`);
    return undefined;
  }

  // ---- commands ------------------------------------------------------------------------------

  private async fixFailingTest(): Promise<FixResult | undefined> {
    await this.starting;
    if (!this.runningClient()) {
      return undefined;
    }
    const target = await pickFixTarget(vscode.window.activeTextEditor);
    return target ? this.runFix(target) : undefined;
  }

  /** Runs fixloop.server.fixFailingTest with our own progress token in a cancellable notification. */
  async runFix(target: FixTarget): Promise<FixResult | undefined> {
    const client = this.runningClient();
    if (!client) {
      return undefined;
    }
    const token = randomUUID();
    this.lastEdit = undefined;
    const label = 'testId' in target ? shortTestName(target.testId) : cursorTestName(target) ?? 'test under the cursor';
    this.activeRuns.set(token, label);
    this.updateStatus();
    let result: FixResult | undefined;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'fixloop', cancellable: true },
        async (progress, cancel) => {
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
              { command: SERVER_FIX, arguments: [target], workDoneToken: token },
              cancel,
            );
            return isFixResult(answer) ? answer : undefined;
          } catch (error) {
            if (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled) {
              return cancelledResult(target);
            }
            throw error;
          } finally {
            onProgress.dispose();
            onCancel.dispose();
          }
        },
      );
    } catch (error) {
      this.log.error(`fix failed: ${String(error)}`);
      void vscode.window.showErrorMessage(`fixloop: the fix failed: ${errorMessage(error)}`);
      return undefined;
    } finally {
      this.activeRuns.delete(token);
      this.quietResultsUntil = Date.now() + 10_000;
      this.updateStatus();
    }
    if (result) {
      this.lastResult = result;
      this.showResult(result);
    }
    if (this.activeRuns.size === 0) {
      this.serverToasts.clear();
    }
    return result;
  }

  private showResult(result: FixResult): void {
    const names = result.testIds.map(shortTestName).join(', ') || 'the test';
    const undo = 'Undo';
    const transcript = 'Show transcript';
    const buttons = result.transcript ? [transcript] : [];
    this.log.info(`result: ${JSON.stringify({ ...result, diff: undefined })}`);
    let shown: Thenable<string | undefined>;
    if (result.status === 'fixed' && result.applied) {
      // the refactor preview lets the user untick changes; count what really changed
      const changed = this.lastEdit ? [...this.lastEdit.after].filter(([uri, text]) => this.lastEdit!.before.get(uri) !== text).length : result.files.length;
      const plural = (n: number) => `${n} file${n === 1 ? '' : 's'}`;
      const files =
        changed < result.files.length
          ? `${plural(changed)} of ${result.files.length} changed (the rest was left out in the preview)`
          : `${plural(result.files.length)} changed`;
      shown = vscode.window.showInformationMessage(
        `fixloop: fixed ${names} in ${result.steps} step${result.steps === 1 ? '' : 's'}, ${files}`,
        undo,
        ...buttons,
      );
    } else if (result.status === 'fixed') {
      const why = result.failureReason ?? 'discarded or rejected by the editor';
      shown = vscode.window.showWarningMessage(`fixloop: found a fix for ${names}, but it was not applied: ${why}`, ...buttons);
    } else if (result.status === 'cancelled') {
      shown = vscode.window.showInformationMessage(`fixloop: run cancelled; no file was changed.`, ...buttons);
    } else if (result.status === 'not_fixed') {
      shown = vscode.window.showWarningMessage(`fixloop: could not fix ${names}: ${result.summary}`, ...buttons);
    } else {
      const text = `fixloop: ${result.summary || 'the run failed'}`;
      if (this.serverToasts.has(text)) {
        return; // the server has just said exactly this
      }
      shown = vscode.window.showErrorMessage(text, ...buttons);
    }
    void Promise.resolve(shown).then(async (choice) => {
      if (choice === undo) {
        await this.undoLastFix();
      } else if (choice === transcript) {
        await this.showTranscript();
      }
    });
  }

  /** Remembers each applied edit's before/after texts so "Undo" works even after focus moved. */
  private async applyEdit(
    params: ApplyWorkspaceEditParams,
    next: (params: ApplyWorkspaceEditParams, token: CancellationToken) => unknown,
  ): Promise<ApplyWorkspaceEditResult> {
    const uris = editedUris(params);
    const before = new Map<string, string | undefined>();
    for (const uri of uris) {
      before.set(uri, await documentText(uri));
    }
    const answer = await Promise.resolve(next(params, CancellationToken.None));
    if (answer instanceof ResponseError) {
      throw answer;
    }
    const result = answer as ApplyWorkspaceEditResult;
    this.log.info(`applyEdit "${params.label ?? ''}": applied=${result.applied}${result.failureReason ? ` (${result.failureReason})` : ''}`);
    if (result.applied) {
      const after = new Map<string, string>();
      for (const uri of uris) {
        after.set(uri, (await documentText(uri)) ?? '');
      }
      this.lastEdit = { before, after };
    }
    return result;
  }

  private async undoLastFix(): Promise<void> {
    const last = this.lastEdit;
    if (!last) {
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    for (const [uriText, afterText] of last.after) {
      const uri = vscode.Uri.parse(uriText);
      const document = await vscode.workspace.openTextDocument(uri);
      if (document.getText() !== afterText) {
        void vscode.window.showWarningMessage(
          `fixloop: ${vscode.workspace.asRelativePath(uri)} changed since the fix; use Edit > Undo instead.`,
        );
        return;
      }
      const original = last.before.get(uriText);
      if (original === undefined) {
        edit.deleteFile(uri);
      } else {
        edit.replace(uri, new vscode.Range(0, 0, document.lineCount, 0), original);
      }
    }
    if (await vscode.workspace.applyEdit(edit)) {
      this.lastEdit = undefined;
      void vscode.window.showInformationMessage('fixloop: fix undone (files are unsaved).');
    }
  }

  private async runTests(): Promise<void> {
    await this.starting;
    const client = this.runningClient();
    if (!client) {
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const args: { uri?: string } = {};
    if (editor?.document.languageId === 'python' && /(^|[\\/])(test_[^\\/]*|[^\\/]*_test)\.py$/.test(editor.document.fileName)) {
      args.uri = editor.document.uri.toString();
    }
    const what = args.uri ? vscode.workspace.asRelativePath(editor!.document.uri) : 'the project';
    try {
      const result: unknown = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `fixloop: running the tests of ${what}`, cancellable: true },
        (_progress, cancel) =>
          client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_RUN_TESTS, arguments: [args] }, cancel),
      );
      void vscode.window.showInformationMessage(`fixloop: ${describeTestRun(result)}`);
    } catch (error) {
      if (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled) {
        return;
      }
      void vscode.window.showErrorMessage(`fixloop: running the tests failed: ${errorMessage(error)}`);
    }
  }

  private async cancel(): Promise<void> {
    const client = this.client;
    if (!client?.isRunning() || this.activeRuns.size === 0) {
      void vscode.window.showInformationMessage('fixloop: no run to cancel.');
      return;
    }
    for (const token of this.activeRuns.keys()) {
      void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    }
    await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_CANCEL, arguments: [{}] });
  }

  async showTranscript(): Promise<void> {
    const path = this.lastResult?.transcript;
    if (!path) {
      void vscode.window.showInformationMessage('fixloop: no transcript yet; run "fixloop: Fix failing test" first.');
      return;
    }
    try {
      const result = this.lastResult!;
      const content = await loadTranscript(path, result.testIds.join(', ') || result.runId);
      // a read-only document (never "unsaved"), named after the run
      const uri = vscode.Uri.from({ scheme: TRANSCRIPT_SCHEME, path: `/transcript-${result.runId || 'last'}.md` });
      this.transcripts.set(uri.toString(), content);
      this.transcriptChanged.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { preview: false });
    } catch (error) {
      void vscode.window.showErrorMessage(`fixloop: cannot read the transcript ${path}: ${errorMessage(error)}`);
    }
  }

  private async setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: 'fixloop: API key for the model endpoint',
      prompt: 'Stored in VS Code\'s secret storage and passed to the server as FIXLOOP_API_KEY. Empty removes it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) {
      return;
    }
    if (key) {
      await this.context.secrets.store(SECRET_KEY, key);
    } else {
      await this.context.secrets.delete(SECRET_KEY);
    }
    await this.restart();
    void vscode.window.showInformationMessage(key ? 'fixloop: API key stored; server restarted.' : 'fixloop: API key removed.');
  }

  // ---- status bar ----------------------------------------------------------------------------

  private updateStatus(): void {
    const model = vscode.workspace.getConfiguration('fixloop').get<string>('model', '') || process.env.FIXLOOP_MODEL || 'no model set';
    const running = [...this.activeRuns.values()];
    if (running.length) {
      this.status.text = `$(sync~spin) fixloop: fixing ${running.join(', ')}`;
      this.status.tooltip = `fixloop (${model}) is running; click to cancel`;
      this.status.command = 'fixloop.cancel';
      this.status.backgroundColor = undefined;
    } else if (this.serverProblem) {
      this.status.text = `$(warning) fixloop: ${this.serverProblem}`;
      this.status.tooltip = 'Click to restart the fixloop server';
      this.status.command = 'fixloop.restartServer';
      this.status.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    } else {
      this.status.text = `$(beaker) fixloop: ${model}`;
      this.status.tooltip = 'fixloop: fix the failing test under the cursor';
      this.status.command = 'fixloop.fixFailingTest';
      this.status.backgroundColor = undefined;
    }
  }

  async dispose(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const d of [...this.disposables, ...this.clientDisposables]) {
      d.dispose();
    }
    if (client) {
      await client.stop(2_000).catch(() => undefined);
    }
  }
}

/** The `fixloop.*` settings the server reads (client-only keys left out). */
function serverSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('fixloop');
  const keys = ['model', 'baseUrl', 'apiKeyEnv', 'protocol', 'maxSteps', 'attempts', 'testCommand', 'testTimeout', 'allowTestEdits', 'runTestsOnSave'];
  const settings: Record<string, unknown> = {};
  for (const key of keys) {
    const value = config.get(key);
    if (value !== undefined && value !== '') {
      settings[key] = value;
    }
  }
  return settings;
}

function editedUris(params: ApplyWorkspaceEditParams): string[] {
  const uris = new Set<string>(Object.keys(params.edit.changes ?? {}));
  for (const change of params.edit.documentChanges ?? []) {
    if ('textDocument' in change) {
      uris.add(change.textDocument.uri);
    } else if (change.kind === 'create' || change.kind === 'delete') {
      uris.add(change.uri);
    }
  }
  return [...uris];
}

async function documentText(uri: string): Promise<string | undefined> {
  try {
    return (await vscode.workspace.openTextDocument(vscode.Uri.parse(uri))).getText();
  } catch {
    return undefined;
  }
}

/** The name of the test function around `{uri, position}` when that document is open. */
function cursorTestName(target: FixTarget): string | undefined {
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

function cancelledResult(target: FixTarget): FixResult {
  return {
    runId: '',
    status: 'cancelled',
    testIds: 'testId' in target ? [target.testId] : [],
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

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

let extension: FixloopExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new FixloopExtension(context);
  context.subscriptions.push({ dispose: () => void extension?.dispose() });
  // Commands exist before the client starts, so the palette never says "command not found".
  extension.registerCommands();
  await extension.start();
}

export async function deactivate(): Promise<void> {
  await extension?.dispose();
  extension = undefined;
}
