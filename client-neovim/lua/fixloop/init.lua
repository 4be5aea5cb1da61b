-- fixloop for Neovim 0.7+: starts `fixloop serve` for Python buffers and adds :FixloopFix,
-- :FixloopTryAnother, :FixloopCancel and :FixloopRunTests, with the run's progress echoed unless a progress UI shows it.
--
--   require('fixloop').setup({ settings = { model = 'gpt-4o-mini' } })
--
-- On 0.11+ `vim.lsp.enable('fixloop')` alone works too (lsp/fixloop.lua). See :help fixloop.
local compat = require('fixloop.compat')
local config = require('fixloop.config')
local progress = require('fixloop.progress')
local testids = require('fixloop.testids')

local M = {}

local SERVER_FIX = 'fixloop.server.fixFailingTest'
local SERVER_RUN_TESTS = 'fixloop.server.runTests'
local SERVER_CANCEL = 'fixloop.server.cancel'
local SERVER_TRY_ANOTHER = 'fixloop.server.tryAnotherFix'

M.config = config.options
M.last_result = nil -- the FixResult of the last fix that finished
M.status = progress.status

local next_token = 0
local active_tokens = {} -- progress token -> true while a fix started here runs

local function notify(msg, level)
  vim.schedule(function() vim.notify(msg, level or vim.log.levels.INFO) end)
end

--- The fixloop client attached to `bufnr`, else the one whose root holds the buffer's file (a file
--- with diagnostics that is not open), else any fixloop client.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(bufnr)
  local any, holding
  for _, client in ipairs(compat.fixloop_clients()) do
    any = any or client
    if vim.lsp.buf_is_attached(bufnr, client.id) then return client end
    local root = client.config.root_dir
    if root and vim.startswith(path, root .. '/') and (not holding or #root > #holding.config.root_dir) then
      holding = client
    end
  end
  return holding or any
end

--- The workspace folder (a file URI) of `bufnr` for `client`: the innermost folder holding the file,
--- else the client's root_dir. Commands send it as `root`.
function M.root_uri(client, bufnr)
  local path = bufnr and vim.api.nvim_buf_get_name(bufnr) or ''
  local best
  for _, folder in ipairs(client.workspace_folders or {}) do
    local dir = vim.uri_to_fname(folder.uri)
    if path == dir or vim.startswith(path, dir .. '/') then
      if not best or #dir > #best then best = dir end
    end
  end
  best = best or client.config.root_dir or (client.workspace_folders and client.workspace_folders[1]
    and vim.uri_to_fname(client.workspace_folders[1].uri))
  return best and vim.uri_from_fname(best) or nil
end

-- ---- fixes ---------------------------------------------------------------------------------------

local function failed_result(arg, err)
  return {
    status = 'error',
    testIds = arg.testId and { arg.testId } or {},
    summary = err.message or vim.inspect(err),
    error = { kind = 'ResponseError', message = err.message or vim.inspect(err) },
  }
end

--- A fix the user discarded (the Apply question) can be tried again, differently.
local function offer_another(result)
  if type(result) == 'table' and result.status == 'fixed' and result.applied == false and result.runId then
    notify('fixloop: the fix was not applied; :FixloopTryAnother [reason] asks for a different one')
  end
end

--- Sends fixFailingTest with `arg` ({testId} or {uri, position}; `root` is added) to `client`.
--- Fires User FixloopFixStarted (data: the arguments, bufnr, client_id, token) and
--- User FixloopFixFinished (data: the FixResult). `on_result(err, result)` replaces the default
--- handling (the server itself says how the run ended).
function M.send_fix(client, bufnr, arg, on_result)
  arg = vim.deepcopy(arg)
  arg.root = arg.root or M.root_uri(client, bufnr)
  return M.send_command(client, bufnr, SERVER_FIX, arg, on_result)
end

--- Sends a fix command (fixFailingTest, tryAnotherFix) with its progress token and events.
function M.send_command(client, bufnr, command, arg, on_result)
  next_token = next_token + 1
  local token = ('fixloop-nvim-%d-%d'):format(vim.loop.os_getpid(), next_token)
  active_tokens[token] = true
  compat.fire('FixloopFixStarted', vim.tbl_extend('force', arg, { bufnr = bufnr, client_id = client.id, token = token }))
  return compat.request(client, 'workspace/executeCommand',
    { command = command, arguments = { arg }, workDoneToken = token },
    function(err, result, ...)
      active_tokens[token] = nil
      local fix_result = err and failed_result(arg, err) or result
      if type(fix_result) == 'table' then M.last_result = fix_result end
      if on_result then
        on_result(err, result, ...)
      elseif err then
        notify('fixloop: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      else
        offer_another(result)
      end
      compat.fire('FixloopFixFinished', fix_result)
    end, bufnr)
end

--- Fixes `test_id` (completion offers the failing ones), else the test under the cursor (the first
--- failing test of the buffer when the cursor is in none). `opts.on_result(err, result)`.
function M.fix(test_id, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local arg
  if test_id and test_id ~= '' then
    arg = { testId = test_id }
    local known = testids.find(test_id)
    if known and vim.api.nvim_buf_get_name(known.bufnr) ~= '' then
      bufnr = known.bufnr -- its workspace folder, in a multi-root setup
      arg.uri = vim.uri_from_bufnr(bufnr)
    end
  else
    local cursor = vim.api.nvim_win_get_cursor(0)
    arg = { uri = vim.uri_from_bufnr(bufnr), position = { line = cursor[1] - 1, character = cursor[2] } }
  end
  local client = M.client(bufnr)
  if not client then
    notify('fixloop: no fixloop client for this buffer (require("fixloop").setup() or '
      .. 'vim.lsp.enable("fixloop"); :checkhealth fixloop)', vim.log.levels.WARN)
    return
  end
  return M.send_fix(client, bufnr, arg, opts.on_result)
end

--- "Try another fix": goes on with the last fix's run, which the user discarded or undid, telling the
--- model it was rejected (and `reason`, if given); that exact fix is not proposed again.
function M.try_another(reason, opts)
  opts = opts or {}
  local last = M.last_result
  if type(last) ~= 'table' or last.status ~= 'fixed' or not last.runId then
    notify('fixloop: no fix to try again: :FixloopTryAnother follows a fix you discarded or undid',
      vim.log.levels.WARN)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then return end
  local arg = { runId = last.runId }
  if reason and reason ~= '' then arg.reason = reason end
  return M.send_command(client, bufnr, SERVER_TRY_ANOTHER, arg, opts.on_result)
end

--- Cancels every running fix (the server stops its runs; the files stay as they were).
function M.cancel()
  local client = M.client()
  if not client then return end
  for token in pairs(active_tokens) do
    compat.notify_server(client, 'window/workDoneProgress/cancel', { token = token })
  end
  compat.request(client, 'workspace/executeCommand', { command = SERVER_CANCEL, arguments = { {} } }, function() end)
end

--- Runs the current test file's tests (all tests when the buffer is not a test file).
function M.run_tests(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then return end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
  local arg = { root = M.root_uri(client, bufnr) }
  if name:match('^test_.*%.py$') or name:match('_test%.py$') then arg.uri = vim.uri_from_bufnr(bufnr) end
  return compat.request(client, 'workspace/executeCommand', { command = SERVER_RUN_TESTS, arguments = { arg } },
    opts.on_result or function(err, result)
      if err then
        notify('fixloop: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      elseif type(result) == 'table' and type(result.summary) == 'string' then
        notify('fixloop: ' .. result.summary)
      end
    end, bufnr)
end

--- :FixloopFix completion: the failing test ids fixloop's diagnostics carry.
function M.complete(arg_lead)
  return testids.complete(arg_lead or '')
end

-- ---- wiring --------------------------------------------------------------------------------------

--- Called when the server process ends: a failed start gets the install hint.
function M.on_exit(code, signal, cmd)
  if config.options.on_exit_hook then config.options.on_exit_hook(code, signal) end
  if code ~= 0 and signal == 0 then
    notify(('fixloop: the server `%s` exited with code %d. Is fixloop installed? %s; or set '
      .. '`server_python` to an interpreter that has it. :checkhealth fixloop says more.')
      :format(table.concat(cmd or config.server_cmd(), ' '), code, config.INSTALL_HINT), vim.log.levels.WARN)
  end
end

local function define_commands()
  vim.api.nvim_create_user_command('FixloopFix', function(a) M.fix(a.args) end, {
    nargs = '?',
    complete = function(arg_lead) return M.complete(arg_lead) end,
    desc = 'fixloop: fix the failing test under the cursor (or the given test id)',
  })
  vim.api.nvim_create_user_command('FixloopTryAnother', function(a) M.try_another(a.args) end, {
    nargs = '?',
    desc = 'fixloop: the last fix was wrong: try another one (optionally saying why)',
  })
  vim.api.nvim_create_user_command('FixloopCancel', function() M.cancel() end,
    { desc = 'fixloop: cancel the running fix' })
  vim.api.nvim_create_user_command('FixloopRunTests', function() M.run_tests() end,
    { desc = 'fixloop: run the tests of this file (or the project) and mark the failing ones' })
end

--- Commands, the progress listener and the code action / code lens route (through
--- vim.lsp.commands, so those fixes fire the same events). Idempotent; setup(), plugin/fixloop.lua
--- and lsp/fixloop.lua's on_attach call it.
function M.attach()
  if M.attached then return end
  M.attached = true
  define_commands()
  progress.listen()
  vim.lsp.commands[SERVER_FIX] = function(command, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id) or M.client(ctx.bufnr)
    local arg = command.arguments and command.arguments[1]
    if not client or type(arg) ~= 'table' then return end
    M.send_fix(client, ctx.bufnr or vim.api.nvim_get_current_buf(), arg)
  end
end

-- ---- setup ---------------------------------------------------------------------------------------

local started = {} -- start_client: root_dir -> client id

local function start_api()
  local api = config.options.start_api
  if api and api ~= 'auto' then return api end
  if compat.has('nvim-0.11') then return 'config' end
  if compat.has('nvim-0.8') then return 'start' end
  return 'start_client'
end

local function client_config(bufnr)
  local cmd = config.server_cmd()
  local extra = {
    on_attach = config.options.on_attach,
    on_exit = function(code, signal) M.on_exit(code, signal, cmd) end,
    -- serverInfo for :checkhealth (kept by Neovim itself from 0.10 on)
    on_init = function(client, result) client.server_info = client.server_info or result.serverInfo end,
  }
  if bufnr then extra.root_dir = config.root_dir(bufnr) end
  local c = config.client_config(config.options, extra)
  c.cmd = cmd
  return c
end

local function start_for_buffer(bufnr)
  local c = client_config(bufnr)
  c.filetypes, c.root_markers = nil, nil
  if start_api() == 'start' then
    vim.lsp.start(c, { bufnr = bufnr })
    return
  end
  local id = started[c.root_dir]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(c)
    started[c.root_dir] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
end

--- Starts fixloop for `filetypes` buffers with these options (see :help fixloop-setup).
function M.setup(opts)
  M.config = config.set(opts)
  M.attach()
  if start_api() == 'config' then
    vim.lsp.config('fixloop', client_config(nil))
    vim.lsp.enable('fixloop')
    return
  end
  local group = vim.api.nvim_create_augroup('fixloop_start', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.options.filetypes,
    callback = function(ev) start_for_buffer(ev.buf) end,
  })
  -- buffers opened before setup()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(config.options.filetypes, vim.bo[buf].filetype) then
      start_for_buffer(buf)
    end
  end
end

return M
