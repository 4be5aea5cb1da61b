// A LogOutputChannel that appends to a file at Trace level: the real client's protocol trace, for tests.
//
// vscode-languageclient (10+) writes LSP traces only when the trace channel's log level is Trace, and no
// command-line flag sets a per-extension log level, so end-to-end tests set FIXLOOP_LSP_TRACE_FILE and
// read this file to assert on $/progress and workspace/applyEdit as the client really saw them.
import { appendFileSync } from 'node:fs';
import * as vscode from 'vscode';

export class FileTraceChannel implements vscode.LogOutputChannel {
  readonly logLevel = vscode.LogLevel.Trace;
  readonly onDidChangeLogLevel: vscode.Event<vscode.LogLevel> = new vscode.EventEmitter<vscode.LogLevel>().event;

  constructor(
    readonly name: string,
    private readonly file: string,
  ) {}

  private write(level: string, message: string, args: unknown[]): void {
    const extra = args.length ? ' ' + args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ') : '';
    try {
      appendFileSync(this.file, `${new Date().toISOString()} [${level}] ${message}${extra}\n`);
    } catch {
      // a trace must never break the client
    }
  }

  trace(message: string, ...args: unknown[]): void {
    this.write('trace', message, args);
  }
  debug(message: string, ...args: unknown[]): void {
    this.write('debug', message, args);
  }
  info(message: string, ...args: unknown[]): void {
    this.write('info', message, args);
  }
  warn(message: string, ...args: unknown[]): void {
    this.write('warn', message, args);
  }
  error(error: string | Error, ...args: unknown[]): void {
    this.write('error', typeof error === 'string' ? error : error.stack ?? error.message, args);
  }
  append(value: string): void {
    this.write('raw', value, []);
  }
  appendLine(value: string): void {
    this.write('raw', value, []);
  }
  replace(value: string): void {
    this.write('raw', value, []);
  }
  clear(): void {}
  show(): void {}
  hide(): void {}
  dispose(): void {}
}
