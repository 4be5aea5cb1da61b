// The server's window/showMessage: we declare (experimental.fixloop.showsResults) that this client shows each
// command's answer itself, so the server sends no message repeating a fix's or a test run's outcome, and
// every message that does come is shown by its type. No runtime `vscode` import, so node:test covers it.
import type * as vscode from 'vscode';
import type { ClientCapabilities, FeatureState, ShowMessageParams, StaticFeature } from 'vscode-languageclient/node';

/** Adds `fixloop.showsResults` to the client's experimental capabilities, keeping what is there. */
export function declareShowsResults(capabilities: ClientCapabilities): void {
  const experimental: Record<string, unknown> =
    typeof capabilities.experimental === 'object' && capabilities.experimental !== null ? capabilities.experimental : {};
  const ours = experimental.fixloop;
  const fixloop = typeof ours === 'object' && ours !== null ? ours : {};
  capabilities.experimental = { ...experimental, fixloop: { ...fixloop, showsResults: true } };
}

/** The language client's hook for the declaration: it fills the capabilities sent with `initialize`. */
export class ShowsResultsFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    declareShowsResults(capabilities);
  }

  initialize(): void {}

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {}
}

/** The parts of `vscode.window` a server message is shown with. */
export type MessageWindow = Pick<typeof vscode.window, 'showErrorMessage' | 'showWarningMessage' | 'showInformationMessage'>;

const ERROR = 1;
const WARNING = 2;

/** Logs the server's message and shows it as an error, a warning or (Info, Log, Debug) information. */
export function showServerMessage({ type, message }: ShowMessageParams, window: MessageWindow, log: (line: string) => void): void {
  log(`server: ${message}`);
  if (type === ERROR) {
    void window.showErrorMessage(message);
  } else if (type === WARNING) {
    void window.showWarningMessage(message);
  } else {
    void window.showInformationMessage(message);
  }
}
