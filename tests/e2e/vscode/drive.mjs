// Drives the real VS Code workbench (code-server) in headless Chromium with playwright-core, as a user:
//   node drive.mjs <scenario> <config.json>
// scenario: fix | cancel | missing | preview | undo | another | explorer | multiroot.
// config: {url, folder, out, playwrightCore, chromium, timeoutMs, ...the scenario's own keys}.
// Writes <out>/result.json (steps with their times, texts seen, errors) and screenshots into <out>;
// exits 0 when the scenario's user-visible steps all happened, 1 otherwise. The Python test checks files.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [scenario, configPath] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configPath, 'utf8'));
const require = createRequire(import.meta.url);
const { chromium } = require(config.playwrightCore);
const TIMEOUT = config.timeoutMs ?? 60_000;

const result = { scenario, steps: {}, texts: {}, screenshots: {}, errors: [], console: [], toastTimeline: [] };
const t0 = Date.now();
const step = (name) => {
  result.steps[name] = (Date.now() - t0) / 1000;
};

let browser;
let page;

async function screenshot(name, what) {
  const file = join(config.out, `${scenario}-${name}.png`);
  await page.screenshot({ path: file });
  result.screenshots[name] = { file, what };
}

async function toastTexts() {
  return page.$$eval('.notifications-toasts .notification-toast', (els) => els.map((e) => e.innerText));
}

/** Waits for a notification toast containing `text`; returns its text. */
async function waitForToast(text, timeout = TIMEOUT) {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await toast.waitFor({ state: 'visible', timeout });
  return toast.innerText();
}

async function runCommand(title) {
  const input = page.locator('.quick-input-widget input');
  // a view that opens on its own (the failure peek, when a test run reports late on a loaded machine)
  // takes the focus and closes the palette: then the palette is opened again, once
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout: TIMEOUT });
    try {
      await input.fill('>' + title, { timeout: 10_000 });
      break;
    } catch (error) {
      if (attempt >= 2) throw error;
    }
  }
  // the focused (first) row, once filtering has caught up: Enter runs that one
  const row = page.locator('.quick-input-list .monaco-list-row.focused', { hasText: title }).first();
  await row.waitFor({ state: 'visible', timeout: TIMEOUT });
  result.commandsRun = [...(result.commandsRun ?? []), (await row.innerText()).replace(/\s+/g, ' ')];
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: TIMEOUT });
}

async function openFile(name, expectText, rowText = name) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: TIMEOUT });
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: rowText }).first().waitFor({ timeout: TIMEOUT });
  await page.keyboard.press('Enter');
  await page.locator('.editor-instance .view-line', { hasText: expectText }).first().waitFor({ timeout: TIMEOUT });
}

/** calc.py's editor tab (optionally only when it has `extraClass`, e.g. ".dirty"). */
function calcTab(extraClass = '') {
  return page
    .locator(`.tabs-container .tab${extraClass}`, { has: page.locator('.label-name', { hasText: /^calc$/ }) })
    .first();
}

/** "File: Save All" until calc.py on disk holds the fix (a keypress can land while the palette opens). */
async function saveAll() {
  // what the user sees first: calc.py's tab marked unsaved
  await calcTab('.dirty').waitFor({ timeout: TIMEOUT });
  step('dirty_tab');
  for (let attempt = 1; attempt <= 3; attempt++) {
    result.saveAttempts = attempt;
    await runCommand('File: Save All');
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (readFileSync(config.calcPath, 'utf8') === config.calcFixed) return;
      await page.waitForTimeout(100);
    }
    await screenshot(`save-attempt-${attempt}`, 'the workbench after a Save All that did not reach the disk');
    await page.keyboard.press('Escape');
  }
  throw new Error('calc.py on disk never got the fix after File: Save All');
}

/** The aria-label of Python's language status entry (fixloop's item: its text and detail) once it holds `text`. */
async function languageStatus(text, timeout = TIMEOUT) {
  const entry = page.locator('[id="status.languageStatus"]').first();
  await entry.waitFor({ timeout });
  const read = async () => {
    const labels = await entry.evaluate((el) => [el, ...el.querySelectorAll('[aria-label]')].map((e) => e.getAttribute('aria-label') ?? ''));
    return labels.join(' | ');
  };
  const deadline = Date.now() + timeout;
  let label = await read();
  while (text && !label.includes(text) && Date.now() < deadline) {
    await page.waitForTimeout(200);
    label = await read();
  }
  if (text && !label.includes(text)) throw new Error(`language status never showed "${text}" (last: ${label})`);
  return label;
}

/** Right-clicks `target` and picks `label` in VS Code's context menu. */
async function contextMenu(target, label) {
  await target.click({ button: 'right' });
  const item = page.locator('.context-view .monaco-menu .action-item', { hasText: label }).first();
  await item.waitFor({ state: 'visible', timeout: TIMEOUT });
  result.menus = [...(result.menus ?? []), (await page.locator('.context-view .monaco-menu').first().innerText()).replace(/\s+/g, ' ')];
  // a menu ignores the mouse-up of the right-click that opened it: give it a moment, as a user's hand does
  await item.hover();
  await page.waitForTimeout(400);
  await item.click();
  await item.waitFor({ state: 'hidden', timeout: 5_000 });
}

async function goToLine(line) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: TIMEOUT });
  await input.fill(':' + line);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: TIMEOUT });
}

/** Records every distinct notification text with its time, for the result file (what the user saw). */
function sampleToasts() {
  const seen = new Set();
  const timer = setInterval(async () => {
    try {
      const texts = await page.$$eval('.notifications-toasts .notification-toast, .notifications-center .notification-list-item',
        (els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));
      for (const text of texts) {
        if (!seen.has(text)) {
          seen.add(text);
          result.toastTimeline.push({ t: (Date.now() - t0) / 1000, text: text.slice(0, 300) });
        }
      }
    } catch {}
  }, 200);
  return () => clearInterval(timer);
}

async function openWorkbench() {
  browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error' && result.console.length < 30) result.console.push(msg.text().slice(0, 300));
  });
  const target = config.workspace ? `workspace=${encodeURIComponent(config.workspace)}` : `folder=${encodeURIComponent(config.folder)}`;
  await page.goto(`${config.url}/?${target}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
  step('workbench');
  const rows = page.locator('.explorer-folders-view .monaco-list-row').first();
  try {
    await rows.waitFor({ timeout: config.workspace ? 20_000 : TIMEOUT });
  } catch (error) {
    // code-server now and then opens a .code-workspace as "No Folder Opened" and stays so; loading the
    // page again reads the workspace file again
    if (!config.workspace) throw error;
    result.texts.workspaceReloaded = await page.locator('.explorer-folders-view, .explorer-viewlet').first().innerText().catch(() => '');
    await page.reload();
    await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
    await rows.waitFor({ timeout: TIMEOUT });
  }
  step('explorer');
}

async function fix() {
  await openFile('test_calc.py', 'def test_add');
  step('file_open');
  await runCommand('fixloop: Run tests');
  await page.locator('.editor-instance [class*="squiggly-"]').first().waitFor({ timeout: TIMEOUT });
  step('diagnostic');
  result.texts.runTests = await waitForToast('passed').catch(() => '');
  await goToLine(config.testLine);
  await runCommand('fixloop: Fix failing test');
  step('fix_invoked');
  // the model's thought streams into the progress notification
  result.texts.progress = await waitForToast(config.thought);
  step('thought_shown');
  result.texts.statusDuringRun = await languageStatus('fixing');
  await screenshot('progress', 'the fixloop progress notification showing the model\'s thought, with its Cancel button');
  result.texts.result = await waitForToast('fixloop: fixed');
  step('result_toast');
  await screenshot('result', 'the result toast "fixloop: fixed test_add in N steps, 1 file changed" with Undo / Show transcript');
  // the edit is applied (unsaved) to calc.py; save everything as a user would
  await saveAll();
  step('saved');
  await runCommand('fixloop: Show transcript of the last run');
  await page.locator('.editor-instance .view-line', { hasText: 'fixloop transcript' }).first().waitFor({ timeout: TIMEOUT });
  // the editor renders only the lines in view: read the top, then the end
  result.texts.transcript = await page.locator('.editor-instance .view-lines').first().innerText();
  await page.keyboard.press('Control+End');
  await page.waitForTimeout(500);
  result.texts.transcriptEnd = await page.locator('.editor-instance .view-lines').first().innerText();
  step('transcript');
  await screenshot('transcript', 'the last run\'s transcript rendered as Markdown (tests, model, thoughts, actions, observations)');
}

async function cancel() {
  await openFile('test_calc.py', 'def test_add');
  step('file_open');
  await runCommand('fixloop: Run tests');
  // this time from the code lens above the failing test: the extension's executeCommand middleware
  // gives it the same cancellable notification as the palette command
  const lens = page.locator('.editor-instance .codelens-decoration a', { hasText: 'fixloop' }).first();
  await lens.waitFor({ timeout: TIMEOUT });
  result.texts.codeLens = await lens.innerText();
  step('code_lens');
  await lens.click();
  step('fix_invoked');
  // the scripted model holds its first answer back: the run is waiting on the model, its last report
  // the baseline's or (when the failure is an assertion) the suspects' line
  result.texts.progress = await waitForToast(/baseline:|suspects:/);
  await page.waitForTimeout(1000);
  step('model_waiting');
  await screenshot('progress', 'the fixloop progress notification while the model is thinking, before Cancel');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'fixloop' }).first();
  await toast.hover();
  await toast.locator('.monaco-button', { hasText: 'Cancel' }).first().click();
  step('cancel_clicked');
  result.texts.result = await waitForToast('run cancelled', 30_000);
  step('cancelled');
  await screenshot('cancelled', 'the "fixloop: run cancelled; no file was changed" toast');
  result.texts.dirtyTabs = await page.$$eval('.tab.dirty', (els) => els.map((e) => e.innerText));
}

async function missing() {
  await openFile('test_calc.py', 'def test_add');
  step('file_open');
  result.texts.hint = await waitForToast('is not installed for');
  step('hint_shown');
  await screenshot('install-hint', 'the error toast: fixloop is not installed for that interpreter; Use bundled fixloop / Copy install command');
  result.texts.status = await languageStatus('not installed');
}

async function preview() {
  await openFile('test_calc.py', 'def test_add');
  step('file_open');
  await goToLine(config.testLine);
  // this time from the editor's context menu
  await contextMenu(page.locator('.editor-instance .view-line', { hasText: 'assert add(2, 3)' }).first(), 'Fix with fixloop');
  step('fix_invoked');
  // the fix changes a test file: VS Code's refactor preview waits for the user
  const apply = page.locator('.monaco-button', { hasText: /^Apply$/ }).first();
  await apply.waitFor({ state: 'visible', timeout: TIMEOUT });
  step('preview_shown');
  result.texts.preview = await page.locator('.part.panel').first().innerText().catch(() => '');
  await screenshot('preview', 'the Refactor Preview: the calc.py fix ticked, the test-file change unticked until reviewed, Apply / Discard');
  // the test-file change is unticked until the user reviews it; accept it too
  const testRow = page.locator('.part.panel .monaco-list-row', { hasText: 'test_calc.py' }).first();
  await testRow.locator('.monaco-checkbox').first().click();
  await page.waitForTimeout(300);
  await screenshot('preview-accepted', 'the Refactor Preview with both changes ticked, just before Apply');
  await apply.click();
  step('applied');
  result.texts.result = await waitForToast('fixloop: fixed');
  step('result_toast');
  await saveAll();
  step('saved');
}

async function undo() {
  await openFile('test_calc.py', 'def test_add');
  step('file_open');
  // the cursor stays on line 1 (no test there): "Fix failing test" takes the failing test of the last run
  await runCommand('fixloop: Run tests');
  await page.locator('.editor-instance [class*="squiggly-"]').first().waitFor({ timeout: TIMEOUT });
  await runCommand('fixloop: Fix failing test');
  step('fix_invoked');
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'fixloop: fixed' }).first();
  await toast.waitFor({ timeout: TIMEOUT });
  result.texts.result = await toast.innerText();
  step('result_toast');
  await calcTab('.dirty').waitFor({ timeout: TIMEOUT });
  await toast.hover();
  await toast.locator('.monaco-button', { hasText: 'Undo' }).first().click();
  step('undo_clicked');
  result.texts.undone = await waitForToast('fix undone');
  step('undone');
  // (test_calc.py's tab also contains "calc.py": pick the tab whose name is exactly calc)
  await calcTab().click();
  await page.locator('.editor-instance .view-line', { hasText: 'return' }).first().waitFor({ timeout: TIMEOUT });
  result.texts.calcEditor = await page.locator('.editor-instance .view-lines').first().innerText();
  await screenshot('undone', 'calc.py back to "return a - b" after Undo in the result toast');
}

async function another() {
  // a fix, Undo in the result toast, then "Try another fix" in the "fix undone" toast with a reason
  await undo();
  const undone = page.locator('.notifications-toasts .notification-toast', { hasText: 'fix undone' }).first();
  await undone.hover();
  await undone.locator('.monaco-button', { hasText: 'Try another fix' }).first().click();
  step('try_another_clicked');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: TIMEOUT });
  result.texts.reasonPrompt = await page.locator('.quick-input-widget').innerText();
  await input.fill(config.reason);
  await page.keyboard.press('Enter');
  step('reason_given');
  const second = page.locator('.notifications-toasts .notification-toast', { hasText: 'fixloop: fixed' }).first();
  await second.waitFor({ timeout: TIMEOUT });
  result.texts.secondResult = await second.innerText();
  step('second_result');
  await calcTab().click();
  await page.locator('.editor-instance .view-line', { hasText: 'return b' }).first().waitFor({ timeout: TIMEOUT });
  result.texts.calcAfterAnother = await page.locator('.editor-instance .view-lines').first().innerText();
  await screenshot('another', 'calc.py with the second fix ("return b + a") after "Try another fix"');
}

async function explorer() {
  await openFile('test_calc.py', 'def test_add');
  step('file_open');
  // the bundled server runs with the system Python: the language status says so
  result.texts.status = await languageStatus('bundled fixloop');
  step('server_ready');
  // the failed test in the Test Explorer offers the fix (testing/item/context)
  await page.locator('.activitybar .action-label[aria-label^="Testing"]').first().click();
  const row = page.locator('.test-explorer .monaco-list-row', { hasText: 'test_add' }).first();
  // the harness controller fills the tree as it discovers the tests: expand what is collapsed until the
  // test's row shows
  const deadline = Date.now() + TIMEOUT;
  while (!(await row.isVisible()) && Date.now() < deadline) {
    const collapsed = page.locator('.test-explorer .monaco-list-row[aria-expanded="false"]').first();
    if (await collapsed.isVisible()) await collapsed.locator('.monaco-tl-twistie').click();
    else await page.waitForTimeout(500);
  }
  await row.waitFor({ timeout: 5_000 });
  step('test_explorer');
  await row.click({ button: 'right' });
  await page.locator('.context-view .monaco-menu .action-item', { hasText: 'Fix with fixloop' }).first().waitFor({ timeout: TIMEOUT });
  result.texts.itemMenu = (await page.locator('.context-view .monaco-menu').first().innerText()).replace(/\s+/g, ' ');
  await screenshot('test-explorer', 'the Test Explorer of the harness controller: test_add failed; its context menu offers Fix with fixloop');
  await page.keyboard.press('Escape');
  // the harness runs the tests again while test_calc.py is visible: the failure peek opens; its
  // results tree lists the failure messages, whose context menu (testing/message/context) starts the fix
  await runCommand('e2e: Report the failing run');
  await page.locator('.peekview-widget').first().waitFor({ timeout: TIMEOUT });
  await runCommand('Test: Toggle Test History in Peek');
  const testRow = page.locator('.peekview-widget .monaco-list-row[aria-level="2"]', { hasText: 'test_add' }).first();
  await testRow.waitFor({ timeout: TIMEOUT });
  // the peek's tree is short: walk to the first message with the keyboard, which scrolls it into view
  await testRow.click({ position: { x: 30, y: 10 } });
  if ((await testRow.getAttribute('aria-expanded')) === 'false') await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const messageRow = page.locator('.peekview-widget .monaco-list-row.focused[aria-level="3"]', { hasText: 'assert -1 == 5' }).first();
  await messageRow.waitFor({ timeout: TIMEOUT });
  step('failure_message');
  await screenshot('failure-peek', 'the failure peek with its results tree: last run > test_add > the failure messages');
  await contextMenu(messageRow, 'Fix with fixloop');
  step('fix_invoked');
  result.texts.result = await waitForToast('fixloop: fixed');
  step('result_toast');
  await screenshot('result', 'the result toast after "Fix with fixloop" on the failure message, with the bundled server');
  await saveAll();
  step('saved');
}

async function multiroot() {
  // a workspace of two folders holding the same project: the fix goes to the folder of the open file
  await openFile(config.openPath, 'def test_add', config.openRow);
  step('file_open');
  await goToLine(config.testLine);
  await runCommand('fixloop: Fix failing test');
  step('fix_invoked');
  result.texts.result = await waitForToast('fixloop: fixed');
  step('result_toast');
  await screenshot('result', 'a two-folder workspace: the fix of beta/tests/test_calc.py::test_add landed in beta');
  await saveAll();
  step('saved');
}

const scenarios = { fix, cancel, missing, preview, undo, another, explorer, multiroot };

try {
  await openWorkbench();
  const stopSampling = sampleToasts();
  await scenarios[scenario]().finally(stopSampling);
  result.ok = true;
} catch (error) {
  result.ok = false;
  result.errors.push(String(error?.stack ?? error));
  try {
    result.texts.toastsAtFailure = await toastTexts();
    await screenshot('failure', 'the workbench when the scenario failed');
  } catch {}
} finally {
  result.seconds = (Date.now() - t0) / 1000;
  writeFileSync(join(config.out, `${scenario}-result.json`), JSON.stringify(result, null, 2));
  await browser?.close().catch(() => {});
}
process.exit(result.ok ? 0 : 1);
