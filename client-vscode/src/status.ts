// fixloop's entry among Python's language status items: the model, the fixes running, server problems.
import * as vscode from 'vscode';

export class FixloopStatus implements vscode.Disposable {
  private readonly item: vscode.LanguageStatusItem;
  private running: string[] = [];
  private problem: string | undefined;
  private server: string | undefined;

  constructor() {
    this.item = vscode.languages.createLanguageStatusItem('fixloop.status', { language: 'python' });
    this.item.name = 'fixloop';
    this.render();
  }

  /** The labels of the fixes now running (empty: none). */
  setRunning(labels: string[]): void {
    this.running = labels;
    this.render();
  }

  /** A short reason the server is not running ("not installed", "stopped"), or undefined. */
  setProblem(problem: string | undefined): void {
    this.problem = problem;
    this.render();
  }

  /** What runs the server ("bundled fixloop 0.1.0 on Python 3.11.2 (/usr/bin/python3)"). */
  setServer(description: string | undefined): void {
    this.server = description;
    this.render();
  }

  render(): void {
    const model =
      vscode.workspace.getConfiguration('fixloop').get<string>('model', '') || process.env.FIXLOOP_MODEL || 'no model set';
    const item = this.item;
    if (this.running.length) {
      item.text = `fixloop: fixing ${this.running.join(', ')}`;
      item.detail = `with ${model}`;
      item.busy = true;
      item.severity = vscode.LanguageStatusSeverity.Information;
      item.command = { title: 'Cancel', command: 'fixloop.cancel', tooltip: 'Cancel the running fix' };
    } else if (this.problem) {
      item.text = `fixloop: ${this.problem}`;
      item.detail = 'see the message or "fixloop: Show logs"';
      item.busy = false;
      item.severity = vscode.LanguageStatusSeverity.Error;
      item.command = { title: 'Restart', command: 'fixloop.restartServer', tooltip: 'Restart the fixloop server' };
    } else {
      item.text = `fixloop: ${model}`;
      item.detail = this.server ?? 'starting';
      item.busy = false;
      item.severity = vscode.LanguageStatusSeverity.Information;
      item.command = { title: 'Fix failing test', command: 'fixloop.fixFailingTest', tooltip: 'Fix the failing test under the cursor' };
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
