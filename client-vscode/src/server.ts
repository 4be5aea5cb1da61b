// The server's lifecycle: check the interpreter, start the bundled (or the environment's) fixloop with it,
// restart after crashes (a few times), and keep the server's settings in step with VS Code's and the
// Python extension's, per workspace folder.
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  CancellationToken,
  CloseAction,
  CloseHandlerResult,
  CodeLensRequest,
  DidChangeConfigurationNotification,
  ErrorAction,
  ErrorHandlerResult,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  ServerOptions,
  ShowMessageNotification,
  State,
} from 'vscode-languageclient/node';
import { answerConfiguration, serverSection, SERVER_KEYS } from './configuration';
import {
  checkLaunch,
  describeLaunch,
  installCommand,
  LaunchCheck,
  launchProblem,
  LaunchProblemView,
  Remedy,
  REMEDY_LABELS,
  strategyEnv,
} from './launchCheck';
import { SERVER_FIX } from './protocol';
import { SelectedInterpreters } from './pythonEnvironment';
import { ApiKeys } from './secrets';
import { showServerMessage, ShowsResultsFeature } from './serverMessages';
import { importStrategy, resolveServerPython } from './serverPython';
import { FixloopStatus } from './status';
import { folderUriOf } from './targets';

const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 3 * 60_000;
const LAUNCHER = 'bundled/tool/launch_server.py';

/** What the rest of the extension does for the client: fixes and applied edits. */
export interface ServerHooks {
  runFix(args: unknown[]): Promise<unknown>;
  applyEdit(
    params: ApplyWorkspaceEditParams,
    next: (params: ApplyWorkspaceEditParams, token: CancellationToken) => unknown,
  ): Promise<ApplyWorkspaceEditResult>;
}

export class ServerLifecycle implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private problem: string | undefined;
  private restarts: number[] = [];
  private clientDisposables: vscode.Disposable[] = [];
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly trace: vscode.LogOutputChannel,
    private readonly status: FixloopStatus,
    private readonly keys: ApiKeys,
    private readonly interpreters: SelectedInterpreters,
    private readonly hooks: ServerHooks,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('fixloop.serverPython') || event.affectsConfiguration('fixloop.importStrategy')) {
          void this.restart();
        } else if (event.affectsConfiguration('fixloop')) {
          this.status.render();
          this.settingsChanged();
        }
      }),
      this.interpreters.onDidChange(() => {
        if (this.problem && !this.starting) {
          void this.restart(); // the newly selected interpreter may run fixloop where the old one could not
        } else {
          this.settingsChanged(); // the server asks again: `python` follows the selection
        }
      }),
    );
  }

  /** Waits for a start in progress; the running client, or undefined with a warning saying why. */
  async runningClient(): Promise<LanguageClient | undefined> {
    await this.starting;
    if (this.client?.isRunning()) {
      return this.client;
    }
    const why = this.problem ?? 'not running';
    void vscode.window.showWarningMessage(`fixloop: the server is ${why}. Run "fixloop: Restart server" once it is fixed.`);
    return undefined;
  }

  /** The client when it runs (no message otherwise). */
  current(): LanguageClient | undefined {
    return this.client?.isRunning() ? this.client : undefined;
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.starting;
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

  private setProblem(problem: string | undefined): void {
    this.problem = problem;
    this.status.setProblem(problem);
  }

  private async doStart(): Promise<void> {
    const resource = vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const { python, source } = await resolveServerPython(resource, this.interpreters);
    const strategy = importStrategy(resource);
    const launcher = this.context.asAbsolutePath(LAUNCHER);
    const check = await checkLaunch(python, launcher, strategy, cwd);
    if (!check.ok) {
      // No client is started, so there is nothing to crash-loop: the user fixes the cause and restarts.
      const problem = launchProblem(check, source);
      this.setProblem(problem.status);
      this.log.error(`${problem.message}${check.detail ? ` (${check.detail})` : ''}`);
      void this.showProblem(check, problem);
      return;
    }
    this.setProblem(undefined);
    this.status.setServer(describeLaunch(check));
    const env: NodeJS.ProcessEnv = { ...process.env, ...strategyEnv(strategy), ...(await this.keys.serverEnv()) };
    const serverOptions: ServerOptions = { command: python, args: [launcher], options: { env, cwd } };
    this.log.info(`starting ${describeLaunch(check)}; interpreter from ${source}, fixloop at ${check.fixloop ?? '?'}`);
    const client = new LanguageClient('fixloop', 'fixloop', serverOptions, await this.clientOptions(resource));
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client) {
        this.status.render();
      }
    });
    client.registerFeature(new ShowsResultsFeature()); // so the server's messages never repeat our result toasts
    client.onNotification(ShowMessageNotification.type, (message) =>
      showServerMessage(message, vscode.window, (line) => this.log.info(line)),
    );
    this.clientDisposables.forEach((d) => d.dispose());
    this.clientDisposables = [this.refreshLensesOnDiagnostics(client)];
    try {
      await client.start();
    } catch (error) {
      this.setProblem('failed to start');
      this.log.error(`the server failed to start: ${String(error)}`);
      void vscode.window.showErrorMessage(`fixloop: the server failed to start (${python} ${launcher}). See "fixloop: Show logs".`);
    }
    this.status.render();
  }

  private async clientOptions(resource: vscode.Uri | undefined): Promise<LanguageClientOptions> {
    return {
      documentSelector: [{ scheme: 'file', language: 'python' }],
      initializationOptions: await this.initializationOptions(resource),
      outputChannel: this.log,
      traceOutputChannel: this.trace,
      errorHandler: {
        error: (_error, _message, count): ErrorHandlerResult => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
        }),
        closed: (): CloseHandlerResult => this.onServerClosed(),
      },
      middleware: {
        executeCommand: (command, args, next) => (command === SERVER_FIX ? this.hooks.runFix(args) : next(command, args)),
        provideCodeLenses: async (document, token, next) => {
          const lenses = await next(document, token);
          lenses?.forEach((lens) => addRoot(lens.command, document.uri));
          return lenses;
        },
        provideCodeActions: async (document, range, context, token, next) => {
          const actions = await next(document, range, context, token);
          actions?.forEach((action) => addRoot(action instanceof vscode.CodeAction ? action.command : action, document.uri));
          return actions;
        },
        workspace: {
          handleApplyEdit: (params, next) => this.hooks.applyEdit(params, next),
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (answers instanceof ResponseError || !Array.isArray(answers)) {
              return answers;
            }
            return answerConfiguration(params.items, answers, (scope) =>
              this.interpreters.interpreterFor(scope ? vscode.Uri.parse(scope) : undefined),
            );
          },
        },
      },
    };
  }

  /** The server's settings of the first folder (it asks per folder through workspace/configuration later). */
  private async initializationOptions(resource: vscode.Uri | undefined): Promise<Record<string, unknown>> {
    const config = vscode.workspace.getConfiguration('fixloop', resource);
    const raw: Record<string, unknown> = {};
    for (const key of SERVER_KEYS) {
      const value = config.get(key);
      if (value !== undefined && value !== '') {
        raw[key] = value;
      }
    }
    return serverSection(raw, await this.interpreters.interpreterFor(resource));
  }

  /** Tells the server its settings changed; it asks for them again, per folder, through our middleware. */
  private settingsChanged(): void {
    const client = this.current();
    if (client) {
      void client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    }
  }

  private refreshLensesOnDiagnostics(client: LanguageClient): vscode.Disposable {
    // Lenses sit on failing tests, which change when diagnostics do; without this VS Code asks for
    // lenses again only when the document is edited.
    return vscode.languages.onDidChangeDiagnostics((event) => {
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
    });
  }

  private onServerClosed(): CloseHandlerResult {
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    this.restarts.push(now);
    if (this.restarts.length > MAX_RESTARTS) {
      this.setProblem('stopped');
      return {
        action: CloseAction.DoNotRestart,
        message: `fixloop: the server stopped ${MAX_RESTARTS + 1} times in 3 minutes and will not be restarted. See "fixloop: Show logs", then run "fixloop: Restart server".`,
      };
    }
    return { action: CloseAction.Restart };
  }

  private async showProblem(check: LaunchCheck, problem: LaunchProblemView): Promise<void> {
    const labels = problem.remedies.map((remedy) => REMEDY_LABELS[remedy]);
    const choice = await vscode.window.showErrorMessage(`fixloop: ${problem.message}`, ...labels);
    const remedy = problem.remedies.find((r) => REMEDY_LABELS[r] === choice);
    if (remedy) {
      await this.applyRemedy(remedy, check);
    }
  }

  private async applyRemedy(remedy: Remedy, check: LaunchCheck): Promise<void> {
    switch (remedy) {
      case 'useBundled': {
        const inspected = vscode.workspace.getConfiguration('fixloop').inspect('importStrategy');
        const target =
          inspected?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
        await vscode.workspace.getConfiguration('fixloop').update('importStrategy', 'useBundled', target);
        return;
      }
      case 'copyInstallCommand':
        await vscode.env.clipboard.writeText(installCommand(check.python));
        return;
      case 'selectInterpreter': {
        const pythonExtension = (await vscode.commands.getCommands(true)).includes('python.setInterpreter');
        await (pythonExtension
          ? vscode.commands.executeCommand('python.setInterpreter')
          : vscode.commands.executeCommand('workbench.action.openSettings', 'fixloop.serverPython'));
        return;
      }
      case 'showLogs':
        this.log.show();
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

/** Gives a fixFailingTest lens or action from the server the workspace folder of its document as `root`. */
function addRoot(command: vscode.Command | undefined, uri: vscode.Uri): void {
  const [target] = command?.arguments ?? [];
  const root = folderUriOf(uri);
  if (command?.command === SERVER_FIX && root && typeof target === 'object' && target !== null && !('root' in target)) {
    command.arguments = [{ ...target, root }, ...command.arguments!.slice(1)];
  }
}
