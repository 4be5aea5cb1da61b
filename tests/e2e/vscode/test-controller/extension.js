// Test harness for fixloop's VS Code e2e: a TestController whose last run failed tests/test_calc.py::test_add,
// the way a test extension (the Python extension's pytest adapter) shows a failure in the Test Explorer.
// Item ids are opaque (not node ids), so fixloop must derive the node id from the labels.
const vscode = require('vscode');

async function activate(context) {
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  // only in the projects of the tests that ask for it (a marker file), so the others see no test results
  const marker = folder && vscode.Uri.joinPath(folder.uri, '.e2e-test-controller');
  if (!marker || !(await vscode.workspace.fs.stat(marker).then(() => true, () => false))) {
    return;
  }
  const controller = vscode.tests.createTestController('fixloop-e2e-tests', 'e2e tests');
  context.subscriptions.push(controller);
  const fileUri = vscode.Uri.joinPath(folder.uri, 'tests', 'test_calc.py');
  const file = controller.createTestItem('file-1', 'test_calc.py', fileUri);
  const add = controller.createTestItem('case-add', 'test_add', fileUri);
  add.range = new vscode.Range(7, 0, 8, 26);
  const double = controller.createTestItem('case-double', 'test_double', fileUri);
  double.range = new vscode.Range(3, 0, 4, 26);
  file.children.replace([double, add]);
  controller.items.replace([file]);
  const report = () => {
    const run = controller.createTestRun(new vscode.TestRunRequest([file]), 'last run', false);
    run.passed(double, 3);
    // two messages, as pytest-subtests or a failing teardown give: the results tree lists each one
    const message = new vscode.TestMessage(
      ['assert -1 == 5', ' +  where -1 = add(2, 3)', '', 'tests/test_calc.py:9: AssertionError', '', ''].join('\n'),
    );
    message.location = new vscode.Location(fileUri, new vscode.Position(8, 4));
    const teardown = new vscode.TestMessage(['captured stdout:', 'add(2, 3) = -1', '', '', ''].join('\n'));
    run.failed(add, [message, teardown], 5);
    run.end();
  };
  report();
  // "run" the tests again while the test file is visible, as a user does (the failure peek opens)
  context.subscriptions.push(vscode.commands.registerCommand('fixloopE2e.reportFailure', report));
}

module.exports = { activate, deactivate() {} };
