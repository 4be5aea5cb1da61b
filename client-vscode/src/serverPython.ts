// Picks the Python that runs the fixloop server and how fixloop is imported there.
import * as vscode from 'vscode';
import { ImportStrategy } from './launchCheck';
import { SelectedInterpreters } from './pythonEnvironment';

export interface ServerPython {
  /** The interpreter path or command. */
  python: string;
  /** Where it came from, for messages: "fixloop.serverPython", "the Python extension" or "the default python3". */
  source: string;
}

/** `fixloop.serverPython`, else the Python extension's interpreter for `resource`, else `python3`. */
export async function resolveServerPython(
  resource: vscode.Uri | undefined,
  interpreters: SelectedInterpreters,
): Promise<ServerPython> {
  const configured = vscode.workspace.getConfiguration('fixloop', resource).get<string>('serverPython', '').trim();
  if (configured) {
    return { python: expandVariables(configured, resource), source: 'fixloop.serverPython' };
  }
  const selected = await interpreters.interpreterFor(resource);
  if (selected) {
    return { python: selected, source: 'the Python extension' };
  }
  return { python: process.platform === 'win32' ? 'python' : 'python3', source: 'the default python3' };
}

/** `fixloop.importStrategy`: the extension's bundled fixloop (default) or the interpreter's own. */
export function importStrategy(resource: vscode.Uri | undefined): ImportStrategy {
  const value = vscode.workspace.getConfiguration('fixloop', resource).get<string>('importStrategy', 'useBundled');
  return value === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled';
}

function expandVariables(value: string, resource: vscode.Uri | undefined): string {
  const folder = (resource && vscode.workspace.getWorkspaceFolder(resource)) ?? vscode.workspace.workspaceFolders?.[0];
  return value
    .replace(/\$\{workspaceFolder\}/g, folder?.uri.fsPath ?? '')
    .replace(/^~(?=\/|$)/, process.env.HOME ?? '~');
}
