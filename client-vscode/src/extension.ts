// The fixloop VS Code extension: wires the server's lifecycle, the fix and test commands, the result UI,
// the status item and the API key store together, and registers the commands before the server starts.
import { PVSC_EXTENSION_ID, PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';
import { FixCommands } from './fixCommands';
import { PythonEnvironmentsApi, SelectedInterpreters } from './pythonEnvironment';
import { ResultsView } from './results';
import { ApiKeys } from './secrets';
import { ServerLifecycle } from './server';
import { FixloopStatus } from './status';
import { TestCommands } from './testCommands';
import { FileTraceChannel } from './traceFile';

/** The Python extension's environments API, when that extension is installed. */
async function loadPythonEnvironments(): Promise<PythonEnvironmentsApi | undefined> {
  if (!vscode.extensions.getExtension(PVSC_EXTENSION_ID)) {
    return undefined;
  }
  return (await PythonExtension.api()).environments;
}

class FixloopExtension implements vscode.Disposable {
  private readonly log: vscode.LogOutputChannel;
  private readonly status: FixloopStatus;
  private readonly results: ResultsView;
  private readonly keys: ApiKeys;
  private readonly interpreters: SelectedInterpreters;
  private readonly server: ServerLifecycle;
  private readonly fixes: FixCommands;
  private readonly tests: TestCommands;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(context: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('fixloop', { log: true });
    // tests read the real client's protocol trace from a file (see traceFile.ts)
    const traceFile = process.env.FIXLOOP_LSP_TRACE_FILE;
    const trace = traceFile ? new FileTraceChannel('fixloop trace', traceFile) : this.log;
    this.status = new FixloopStatus();
    this.results = new ResultsView(this.log);
    this.keys = new ApiKeys(context.secrets);
    this.interpreters = new SelectedInterpreters(loadPythonEnvironments, (message) => this.log.info(message));
    this.server = new ServerLifecycle(context, this.log, trace, this.status, this.keys, this.interpreters, {
      runFix: (args) => this.fixes.runFixFromServerCommand(args),
      applyEdit: (params, next) => this.results.applyEdit(params, next),
    });
    this.fixes = new FixCommands(this.server, this.results, this.status, this.log);
    this.tests = new TestCommands(this.server);
    this.disposables.push(this.log, this.status, this.results, this.interpreters);
  }

  /** Commands exist before the client starts, so the palette never says "command not found". */
  registerCommands(): void {
    const commands: Record<string, (...args: unknown[]) => unknown> = {
      'fixloop.fixFailingTest': () => this.fixes.fixFailingTest(),
      'fixloop.fixTest': (...args) => this.fixes.fixFromMenu(...args),
      'fixloop.tryAnotherFix': () => this.fixes.tryAnotherFix(),
      'fixloop.runTests': () => this.tests.runTests(),
      'fixloop.cancel': () => this.fixes.cancel(),
      'fixloop.showTranscript': () => this.results.showTranscript(),
      'fixloop.showLogs': () => this.log.show(),
      'fixloop.restartServer': () => this.server.restart(),
      'fixloop.setApiKey': () => this.keys.askAndStore(() => this.server.restart()),
    };
    for (const [id, run] of Object.entries(commands)) {
      this.disposables.push(vscode.commands.registerCommand(id, run));
    }
  }

  start(): Promise<void> {
    return this.server.start();
  }

  async dispose(): Promise<void> {
    await this.server.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}

let extension: FixloopExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new FixloopExtension(context);
  context.subscriptions.push({ dispose: () => void extension?.dispose() });
  extension.registerCommands();
  await extension.start();
}

export async function deactivate(): Promise<void> {
  await extension?.dispose();
  extension = undefined;
}
