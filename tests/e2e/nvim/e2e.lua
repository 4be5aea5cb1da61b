-- Headless Neovim (0.7.2+) end-to-end scenario for fixloop, run as
--   nvim --headless -n -i NONE -u e2e.lua
-- with FIXLOOP_E2E_* in the environment (see tests/e2e/test_neovim.py). Writes a JSON result file and
-- exits 0 on success, 1 on failure. Runs from VimEnter (so vim.wait drives the event loop) inside pcall
-- (a Lua error must never leave headless Neovim hanging).
local RTP = assert(os.getenv('FIXLOOP_E2E_RTP'))
local PY = assert(os.getenv('FIXLOOP_E2E_PY'))
local WS = assert(os.getenv('FIXLOOP_E2E_WS'))
local RESULT = assert(os.getenv('FIXLOOP_E2E_RESULT'))
local SCENARIO = os.getenv('FIXLOOP_E2E_SCENARIO') or 'fix'
local TIMEOUT = tonumber(os.getenv('FIXLOOP_E2E_TIMEOUT') or '60000')

vim.opt.runtimepath:prepend(RTP)
vim.opt.swapfile = false

local res = { scenario = SCENARIO, start_api = os.getenv('FIXLOOP_E2E_START_API') or 'auto', version = tostring(vim.version().major) .. '.' .. tostring(vim.version().minor),
  progress = {}, status_seen = {}, message_requests = {}, errors = {}, marks = {} }
local t0 = vim.loop.hrtime()
local function ms() return math.floor((vim.loop.hrtime() - t0) / 1e6) end
local function mark(name) res.marks[name] = ms() end

local function finish(ok)
  res.ok = ok
  res.elapsed_ms = ms()
  local f = assert(io.open(RESULT, 'w'))
  f:write(vim.fn.json_encode(res))
  f:close()
  local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get_clients()) do c.stop(true) end
  vim.cmd(ok and 'qall!' or 'cquit! 1')
end

local function fail(msg)
  table.insert(res.errors, msg)
  finish(false)
end

local function wait(what, predicate, timeout)
  local fixloop = require('fixloop')
  local ok = vim.wait(timeout or TIMEOUT, function()
    local status = fixloop.status()
    if status ~= '' and res.status_seen[#res.status_seen] ~= status then
      table.insert(res.status_seen, status)
    end
    return res.server_exit ~= nil or predicate()
  end, 20)
  if res.server_exit then
    error('the server exited while waiting for ' .. what .. ': ' .. vim.fn.json_encode(res.server_exit), 0)
  end
  if not ok then error('timed out waiting for ' .. what, 0) end
end

local function read(path)
  local f = assert(io.open(path, 'r'))
  local text = f:read('*a')
  f:close()
  return text
end

local function buffer_text(path)
  local buf = vim.fn.bufnr(path)
  if buf == -1 or not vim.api.nvim_buf_is_loaded(buf) then return nil end
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

-- protocol-level capture, keeping the default handlers' behaviour
local default_progress = vim.lsp.handlers['$/progress']
vim.lsp.handlers['$/progress'] = function(err, result, ctx, config)
  local value = vim.deepcopy(result.value) -- 0.10+ adds fields to result.value
  table.insert(res.progress, { t = ms(), token = result.token, kind = value.kind, message = value.message,
    title = value.title, cancellable = value.cancellable })
  return default_progress(err, result, ctx, config)
end
-- Neovim applies edits without a preview, so the server asks first; the test answers like a user.
-- FIXLOOP_E2E_ANSWERS ("Discard,Apply") answers one question after the other.
local answers = vim.split(os.getenv('FIXLOOP_E2E_ANSWERS') or '', ',', { trimempty = true })
vim.lsp.handlers['window/showMessageRequest'] = function(_, params)
  table.insert(res.message_requests, params.message)
  local wanted = table.remove(answers, 1) or os.getenv('FIXLOOP_E2E_ANSWER') or 'Apply'
  for _, action in ipairs(params.actions or {}) do
    if action.title == wanted then return action end
  end
  return vim.NIL
end

-- the plugin's User events (ev.data on 0.8+; 0.7 has no data, so the module's last_result stands in)
res.events = {}
for _, name in ipairs({ 'FixloopFixStarted', 'FixloopFixFinished' }) do
  vim.api.nvim_create_autocmd('User', {
    pattern = name,
    callback = function(ev)
      local data = ev.data
      if data == nil and name == 'FixloopFixFinished' then data = require('fixloop').last_result end
      table.insert(res.events, { name = name, data = vim.deepcopy(data), t = ms() })
    end,
  })
end
-- progress lines fixloop echoes itself (none while a progress UI is there)
res.echoed = 0
local nvim_echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  -- fixloop's progress echo keeps no history (vim.notify and showMessage do)
  if not history and type(chunks[1]) == 'table' and tostring(chunks[1][1]):find('^fixloop: ') then
    res.echoed = res.echoed + 1
  end
  return nvim_echo(chunks, history, opts)
end

local function event(name)
  for _, e in ipairs(res.events) do if e.name == name then return e end end
end

local function fixloop_diagnostics(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == 'fixloop' then table.insert(found, d) end
  end
  return found
end

local function wait_attached(fixloop, bufnr)
  wait('the fixloop client', function()
    local c = fixloop.client(bufnr)
    return c ~= nil and c.initialized ~= false and vim.lsp.buf_is_attached(bufnr, c.id)
  end)
  mark('attached')
  local client = fixloop.client(bufnr)
  local settings = client.settings or client.config.settings or {}
  res.client = { root_dir = client.config.root_dir, cmd = client.config.cmd,
    python_setting = settings.fixloop and settings.fixloop.python,
    init_python = type(client.config.init_options) == 'table' and client.config.init_options.python or nil }
end

local function start(opts)
  local fixloop = require('fixloop')
  fixloop.setup(vim.tbl_extend('force', {
    python = PY, -- the project's interpreter (this venv has pytest)
    settings = { testCommand = { PY, '-m', 'pytest' }, testTimeout = 60 },
    on_exit_hook = function(code, signal) res.server_exit = { code = code, signal = signal } end,
    start_api = os.getenv('FIXLOOP_E2E_START_API') or 'auto',
  }, opts or {}))
  vim.cmd('edit ' .. vim.fn.fnameescape(WS .. '/tests/test_calc.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  wait_attached(fixloop, bufnr)
  return fixloop, bufnr
end

-- :FixloopFix <Tab> after the failing tests are known
local function record_completion()
  res.completion = vim.fn.getcompletion('FixloopFix ', 'cmdline')
  res.completion_partial = vim.fn.getcompletion('FixloopFix test_a', 'cmdline')
  res.completion_none = vim.fn.getcompletion('FixloopFix nothing_like_this', 'cmdline')
end

local function run_tests(fixloop, bufnr)
  local answer
  fixloop.run_tests({ on_result = function(err, result) answer = { err = err, result = result } end })
  wait('runTests', function() return answer ~= nil end)
  res.run_tests = answer
  wait('fixloop diagnostics', function() return #fixloop_diagnostics(bufnr) > 0 end)
  mark('diagnostics')
  local d = fixloop_diagnostics(bufnr)[1]
  res.diagnostic = { line = d.lnum, message = d.message, code = d.code }
  return d
end

local function scenario_fix()
  local fixloop, bufnr = start()
  local calc = WS .. '/calc.py'
  local before = read(calc)
  local d = run_tests(fixloop, bufnr)
  record_completion()
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, 0 })

  -- the quickfix code action, chosen through vim.ui.select as a user would
  local original_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(titles, title)
      if title:find('Fix failing test with fixloop', 1, true) then
        res.code_action = title
        vim.ui.select = original_select
        return on_choice(item, i)
      end
    end
    res.code_action_titles = titles
    return on_choice(nil, nil)
  end
  -- the cursor line's diagnostics go into the request's context (Neovim collects them itself)
  if vim.fn.has('nvim-0.8') == 1 then
    vim.lsp.buf.code_action({ context = { only = { 'quickfix' } } })
  else
    vim.lsp.buf.code_action({ only = { 'quickfix' } })
  end
  wait('the code action to be chosen', function() return res.code_action ~= nil or res.code_action_titles ~= nil end, 20000)
  if not res.code_action then error('no fixloop quickfix among ' .. vim.fn.json_encode(res.code_action_titles), 0) end
  mark('code_action')
  wait('the fix in the calc.py buffer', function() return buffer_text(calc) ~= nil and buffer_text(calc) ~= before end)
  mark('buffer_fixed')
  res.buffer_calc = buffer_text(calc)
  res.disk_before_write = read(calc)
  wait('the end of progress', function()
    for _, p in ipairs(res.progress) do if p.kind == 'end' then return true end end
    return false
  end)
  wait('the FixloopFixFinished event', function() return event('FixloopFixFinished') ~= nil end)
  vim.cmd('wall')
  mark('written')
  res.disk_after_write = read(calc)
end

-- :FixloopFix, the fix discarded at the Apply question, then :FixloopTryAnother with a reason
local function scenario_another()
  local fixloop, bufnr = start()
  local calc = WS .. '/calc.py'
  res.calc_before = read(calc)
  vim.api.nvim_win_set_cursor(0, { tonumber(os.getenv('FIXLOOP_E2E_TEST_LINE')) + 1, 4 })
  vim.cmd('FixloopFix')
  wait('the first result', function() return fixloop.last_result ~= nil end)
  res.first = vim.deepcopy(fixloop.last_result)
  res.calc_after_discard = buffer_text(calc) or read(calc)
  vim.cmd('FixloopTryAnother keep the operands in the order b, a')
  wait('the second result', function()
    return fixloop.last_result ~= nil and fixloop.last_result.runId ~= res.first.runId
  end)
  res.second = vim.deepcopy(fixloop.last_result)
  wait('the second fix in the calc.py buffer', function() return buffer_text(calc) ~= res.calc_before end)
  res.buffer_calc = buffer_text(calc)
end

local function scenario_cancel()
  local fixloop, bufnr = start()
  local calc = WS .. '/calc.py'
  local test_before = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
  local calc_before = read(calc)
  vim.api.nvim_win_set_cursor(0, { tonumber(os.getenv('FIXLOOP_E2E_TEST_LINE')) + 1, 4 })
  local answer
  vim.cmd('FixloopFix') -- its answer lands in require('fixloop').last_result
  wait('the run to start (progress begin)', function()
    for _, p in ipairs(res.progress) do if p.kind == 'begin' then return true end end
    return false
  end)
  mark('begin')
  -- cancel while the model is "thinking" (its first answer is delayed by the script)
  wait('the baseline report', function()
    for _, p in ipairs(res.progress) do
      if p.kind == 'report' and tostring(p.message):find('baseline:', 1, true) then return true end
    end
    return false
  end)
  vim.wait(1000, function() return false end, 50)
  mark('model_waiting')
  vim.cmd('FixloopCancel')
  mark('cancel_sent')
  wait('the cancelled result', function()
    answer = fixloop.last_result
    return answer ~= nil
  end, 20000)
  mark('cancelled')
  res.result = { status = answer.status, applied = answer.applied }
  -- give a late edit (if any) a chance to arrive before checking nothing changed
  vim.wait(500, function() return false end, 50)
  res.test_buffer_unchanged = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') == test_before
  res.calc_buffer = buffer_text(calc)
  res.calc_disk_unchanged = read(calc) == calc_before
  res.modified_buffers = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      table.insert(res.modified_buffers, vim.api.nvim_buf_get_name(b))
    end
  end
end

-- the current buffer's lines after :checkhealth fixloop
local function checkhealth()
  vim.cmd('checkhealth fixloop')
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local function scenario_missing()
  -- a server interpreter without fixloop: the server exits at once and the plugin says how to install it
  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg, level, opts)
    table.insert(notes, { msg = msg, level = level })
    return notify(msg, level, opts)
  end
  require('fixloop').setup({
    server_python = PY,
    on_exit_hook = function(code, signal) res.exit = { code = code, signal = signal } end,
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(WS .. '/tests/test_calc.py'))
  local ok = vim.wait(TIMEOUT, function() return #notes > 0 end, 20)
  if not ok then error('no message after the server exited: ' .. vim.fn.json_encode(res.exit or {}), 0) end
  res.notes = notes
  res.health = checkhealth()
end

local function scenario_enable()
  -- 0.11+: no setup(), only the lsp/fixloop.lua config the plugin ships, as a user would write it
  vim.lsp.config('fixloop', {
    settings = { fixloop = { python = PY, testCommand = { PY, '-m', 'pytest' }, testTimeout = 60 } },
    on_exit = function(code, signal) res.server_exit = { code = code, signal = signal } end,
  })
  vim.lsp.enable('fixloop')
  -- a progress UI is there (as fidget.nvim would be): fixloop must not echo the lines as well
  vim.api.nvim_create_autocmd('LspProgress', { callback = function() res.ui_progress = (res.ui_progress or 0) + 1 end })
  local resolved = vim.lsp.config.fixloop
  res.resolved = { cmd = resolved.cmd, filetypes = resolved.filetypes, root_markers = resolved.root_markers }
  local fixloop = require('fixloop')
  vim.cmd('edit ' .. vim.fn.fnameescape(WS .. '/tests/test_calc.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  wait_attached(fixloop, bufnr)
  res.loaded_plugin = vim.g.loaded_fixloop == true
  res.commands = vim.tbl_keys(vim.api.nvim_get_commands({}))
  vim.cmd('FixloopRunTests')
  wait('fixloop diagnostics', function() return #fixloop_diagnostics(bufnr) > 0 end)
  record_completion()
  local calc = WS .. '/calc.py'
  vim.cmd('FixloopFix ' .. res.completion[1])
  wait('the FixloopFixFinished event', function() return event('FixloopFixFinished') ~= nil end)
  mark('finished')
  res.buffer_calc = buffer_text(calc)
  vim.cmd('wall')
  res.disk_after_write = read(calc)
end

local function scenario_health()
  -- setup() with `python` as a function of the root; a statusline that shows fixloop's status
  local progress = require('fixloop.progress')
  res.ui = { none = progress.ui() or vim.NIL }
  package.loaded.fidget = {}
  res.ui.fidget = progress.ui() or vim.NIL
  package.loaded.fidget = nil
  local event_name = vim.fn.has('nvim-0.10') == 1 and 'LspProgress' or 'User'
  local id = vim.api.nvim_create_autocmd(event_name,
    { pattern = event_name == 'User' and 'LspProgressUpdate' or nil, callback = function() end })
  res.ui.autocmd = progress.ui() or vim.NIL
  vim.api.nvim_del_autocmd(id)
  vim.o.statusline = "%f %{v:lua.require'fixloop'.status()}"
  res.ui.statusline = progress.ui() or vim.NIL
  local fixloop, bufnr = start({
    python = function(root) res.python_root = root; return PY end,
    settings = { model = 'scripted', baseUrl = 'http://127.0.0.1:9/v1' },
  })
  res.health = checkhealth()
  vim.cmd('help fixloop')
  res.help = { vim.fn.expand('%:t') }
  vim.cmd('help FixloopFixFinished')
  table.insert(res.help, vim.fn.getline('.'))
  vim.cmd('help fixloop-lsp-enable')
  table.insert(res.help, vim.fn.getline('.'))
  res.bufnr = bufnr
  res.fixloop_loaded = fixloop ~= nil
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true, -- so :edit inside fires FileType (which starts the client)
  callback = function()
    local scenarios = { fix = scenario_fix, cancel = scenario_cancel, missing = scenario_missing,
      enable = scenario_enable, health = scenario_health, another = scenario_another }
    local ok, err = pcall(scenarios[SCENARIO])
    if not ok then return fail(tostring(err)) end
    finish(true)
  end,
})
