// The client tells the server it shows each command's answer itself (so no server message repeats a result),
// and shows every message that does come by its type.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClientCapabilities, ShowMessageParams } from 'vscode-languageclient/node';
import { declareShowsResults, MessageWindow, showServerMessage, ShowsResultsFeature } from '../src/serverMessages';

test('the initialize capabilities carry experimental.fixloop.showsResults', () => {
  const capabilities: ClientCapabilities = {};
  new ShowsResultsFeature().fillClientCapabilities(capabilities);
  assert.deepEqual(capabilities.experimental, { fixloop: { showsResults: true } });
});

test('the declaration keeps what other parts put in experimental', () => {
  const capabilities: ClientCapabilities = { experimental: { other: 1, fixloop: { later: 'x' } } };
  declareShowsResults(capabilities);
  assert.deepEqual(capabilities.experimental, { other: 1, fixloop: { later: 'x', showsResults: true } });
});

function recorder(): { window: MessageWindow; shown: string[] } {
  const shown: string[] = [];
  const say = (kind: string) => (message: string) => {
    shown.push(`${kind}: ${message}`);
    return Promise.resolve(undefined);
  };
  const window = { showErrorMessage: say('error'), showWarningMessage: say('warning'), showInformationMessage: say('info') };
  return { window: window as unknown as MessageWindow, shown };
}

test('a server message is logged and shown as an error, a warning or information', () => {
  const { window, shown } = recorder();
  const logged: string[] = [];
  const messages: ShowMessageParams[] = [
    { type: 1, message: 'fixloop: no model configured' },
    { type: 2, message: 'fixloop: maxSteps must be a whole number (using the default)' },
    { type: 3, message: 'fixloop: the local model is ready' },
    { type: 4, message: 'a log line' },
  ];
  messages.forEach((message) => showServerMessage(message, window, (line) => logged.push(line)));
  assert.deepEqual(shown, [
    'error: fixloop: no model configured',
    'warning: fixloop: maxSteps must be a whole number (using the default)',
    'info: fixloop: the local model is ready',
    'info: a log line',
  ]);
  assert.deepEqual(logged, messages.map((m) => `server: ${m.message}`));
});
