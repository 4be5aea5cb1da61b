// A strict LSP client (vscode-jsonrpc, the transport VS Code uses) for the stdout smoke test.
// Usage: node strict_client.js '{"server": [...], "rootUri": "...", "command": "...", "arguments": [...]}'
// Prints one JSON line: {result, progress, edits, errors}; any transport error is recorded in errors.
const { spawn } = require('child_process');
const rpc = require('vscode-jsonrpc/node');

const spec = JSON.parse(process.argv[2]);
const errors = [];
const progress = [];
const edits = [];

const child = spawn(spec.server[0], spec.server.slice(1), { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
const reader = new rpc.StreamMessageReader(child.stdout);
const writer = new rpc.StreamMessageWriter(child.stdin);
reader.onError((e) => errors.push(`reader: ${e.message}`));
writer.onError((e) => errors.push(`writer: ${e[0] && e[0].message}`));
const connection = rpc.createMessageConnection(reader, writer);
connection.onError((e) => errors.push(`connection: ${e[0] && e[0].message}`));

connection.onRequest('window/workDoneProgress/create', () => null);
connection.onRequest('workspace/configuration', (params) => params.items.map(() => null));
connection.onRequest('window/showMessageRequest', () => ({ title: 'Apply' }));
connection.onRequest('workspace/applyEdit', (params) => { edits.push(params); return { applied: true }; });
connection.onNotification('$/progress', (params) => progress.push(params.value.kind));
connection.onNotification('window/logMessage', () => {});
connection.onNotification('window/showMessage', () => {});
connection.onNotification('textDocument/publishDiagnostics', () => {});
connection.listen();

const timer = setTimeout(() => finish({ timeout: true }), (spec.timeout || 90) * 1000);

function finish(result) {
  clearTimeout(timer);
  process.stdout.write(JSON.stringify({ result, progress, edits, errors }) + '\n');
  child.kill();
  process.exit(0);
}

(async () => {
  try {
    await connection.sendRequest('initialize', {
      processId: process.pid, rootUri: spec.rootUri,
      workspaceFolders: [{ uri: spec.rootUri, name: 'proj' }],
      capabilities: {
        window: { workDoneProgress: true },
        workspace: {
          applyEdit: true, configuration: true,
          workspaceEdit: { documentChanges: true, changeAnnotationSupport: { groupsOnLabel: true } },
        },
      },
    });
    connection.sendNotification('initialized', {});
    const result = await connection.sendRequest('workspace/executeCommand',
      { command: spec.command, arguments: spec.arguments });
    await connection.sendRequest('shutdown');
    connection.sendNotification('exit');
    finish(result);
  } catch (e) {
    errors.push(`request: ${e.message}`);
    finish(null);
  }
})();
