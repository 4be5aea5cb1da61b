-- fixloop for Neovim 0.7+: starts `fixloop serve` for Python buffers and adds :FixloopFix,
-- :FixloopCancel and :FixloopRunTests, with the run's progress (the model's thoughts) echoed as it goes.
--
--   require('fixloop').setup({ python = '/path/to/venv/bin/python', settings = { model = 'gpt-4o-mini' } })
--
-- Neovim applies workspace edits without a preview, so the server asks first ("Apply fix?") through
-- window/showMessageRequest; Neovim shows that as a numbered choice.
local M = {}

local SERVER_FIX = 'fixloop.server.fixFailingTest'
local SERVER_RUN_TESTS = 'fixloop.server.runTests'
local SERVER_CANCEL = 'fixloop.server.cancel'

local defaults = {
  -- interpreter with fixloop installed; ignored when `cmd` is given
  python = 'python3',
  -- full server command line; default { python, '-m', 'fixloop', 'serve' }
  cmd = nil,
  -- extra environment for the server (FIXLOOP_BASE_URL, FIXLOOP_MODEL, FIXLOOP_API_KEY, ...)
  cmd_env = nil,
  -- the settings object of DESIGN.md (model, baseUrl, apiKeyEnv, protocol, maxSteps, attempts,
  -- testCommand, testTimeout, allowTestEdits, runTestsOnSave); sent as initializationOptions and as
  -- the `fixloop` section of workspace/configuration
  settings = {},
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.cfg', 'setup.py', 'pytest.ini', '.git' },
  -- echo progress messages (thoughts, actions) as they arrive
  show_progress = true,
  -- extra handlers for the client (method -> function)
  handlers = nil,
  on_attach = nil,
  -- called as on_exit_hook(code, signal) when the server process ends
  on_exit_hook = nil,
  -- how the client is started: 'auto' picks by version ('config' on 0.11+: vim.lsp.config/enable;
  -- 'start' on 0.8-0.10: vim.lsp.start; 'start_client' on 0.7: vim.lsp.start_client)
  start_api = 'auto',
}

M.config = vim.deepcopy(defaults)

local has = function(feature) return vim.fn.has(feature) == 1 end
local next_token = 0
local active_tokens = {} -- progress token -> true while a fixloop run reports progress

-- ---- helpers that paper over API differences between 0.7 and 0.11 -------------------------------

local function all_clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients -- renamed in 0.10
  return get()
end

--- The fixloop client attached to `bufnr` (else any fixloop client).
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local any
  for _, client in pairs(all_clients()) do
    if client.name == 'fixloop' then
      any = any or client
      if vim.lsp.buf_is_attached(bufnr, client.id) then return client end
    end
  end
  return any
end

local function request(client, method, params, handler, bufnr)
  if has('nvim-0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function notify_server(client, method, params)
  if has('nvim-0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

local function notify(msg, level)
  vim.schedule(function() vim.notify(msg, level or vim.log.levels.INFO) end)
end

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.loop.cwd()
  while dir and dir ~= '' do
    for _, marker in ipairs(M.config.root_markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then return dir end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then break end
    dir = parent
  end
  return name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.loop.cwd()
end

local function server_cmd()
  return M.config.cmd or { M.config.python, '-m', 'fixloop', 'serve' }
end

local function on_exit(code, signal)
  if M.config.on_exit_hook then M.config.on_exit_hook(code, signal) end
  if code ~= 0 and signal == 0 then
    local python = M.config.cmd and M.config.cmd[1] or M.config.python
    notify(('fixloop: the server exited with code %d. Is fixloop installed for %s? Install it with: %s -m pip install fixloop')
      :format(code, python, python), vim.log.levels.WARN)
  end
end

local function client_config(bufnr)
  local config = {
    name = 'fixloop',
    cmd = server_cmd(),
    cmd_env = M.config.cmd_env,
    init_options = M.config.settings,
    settings = { fixloop = M.config.settings },
    handlers = M.config.handlers,
    on_attach = M.config.on_attach,
    on_exit = on_exit,
  }
  if bufnr then config.root_dir = root_dir(bufnr) end
  return config
end

-- ---- results -------------------------------------------------------------------------------------

M.last_result = nil

-- The server itself says how each run ended (window/showMessage: "fixloop: fixed …", "cancelled …"),
-- so only a failed request is reported here; the FixResult is kept for scripts and statuslines.
local function on_fix_result(err, result)
  if err then
    notify('fixloop: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    return
  end
  M.last_result = result
end

-- ---- commands ------------------------------------------------------------------------------------

--- Fixes `test_id`, else the test under the cursor (the first failing test of the buffer when the
--- cursor is in none). `opts.on_result(err, result)` replaces the default message.
function M.fix(test_id, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify('fixloop: no fixloop client for this buffer (call require("fixloop").setup())', vim.log.levels.WARN)
    return
  end
  local arg
  if test_id and test_id ~= '' then
    arg = { testId = test_id }
  else
    local cursor = vim.api.nvim_win_get_cursor(0)
    arg = { uri = vim.uri_from_bufnr(bufnr), position = { line = cursor[1] - 1, character = cursor[2] } }
  end
  next_token = next_token + 1
  local token = ('fixloop-nvim-%d-%d'):format(vim.loop.os_getpid(), next_token)
  active_tokens[token] = true
  return request(client, 'workspace/executeCommand',
    { command = SERVER_FIX, arguments = { arg }, workDoneToken = token },
    function(err, result, ...)
      active_tokens[token] = nil
      ;(opts.on_result or on_fix_result)(err, result, ...)
    end, bufnr)
end

--- Cancels every running fix (the server stops its runs; the files stay as they were).
function M.cancel()
  local client = M.client()
  if not client then return end
  for token in pairs(active_tokens) do
    notify_server(client, 'window/workDoneProgress/cancel', { token = token })
  end
  request(client, 'workspace/executeCommand', { command = SERVER_CANCEL, arguments = { {} } }, function() end)
end

--- Runs the current test file's tests (all tests when the buffer is not a test file).
function M.run_tests(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then return end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
  local arg = {}
  if name:match('^test_.*%.py$') or name:match('_test%.py$') then arg.uri = vim.uri_from_bufnr(bufnr) end
  return request(client, 'workspace/executeCommand', { command = SERVER_RUN_TESTS, arguments = { arg } },
    opts.on_result or function(err, result)
      if err then
        notify('fixloop: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      elseif type(result) == 'table' and type(result.summary) == 'string' then
        notify('fixloop: ' .. result.summary)
      end
    end, bufnr)
end

-- ---- progress --------------------------------------------------------------------------------------

local function echo(msg)
  msg = msg:gsub('%s+', ' ')
  local width = math.max(vim.o.columns - 12, 20)
  if #msg > width then msg = msg:sub(1, width - 1) .. '…' end
  vim.api.nvim_echo({ { msg } }, false, {})
end

local current_status = ''

--- The running fix's latest progress message ('' when idle), for a statusline.
function M.status()
  return current_status
end

local function show_progress(value)
  if type(value) ~= 'table' then return end
  if value.kind == 'end' then
    current_status = ''
    if M.config.show_progress then echo('fixloop: ' .. (value.message or 'done')) end
  elseif value.message or value.title then
    current_status = value.message or value.title
    if M.config.show_progress then echo('fixloop: ' .. current_status) end
  end
end

local function setup_progress()
  local group = vim.api.nvim_create_augroup('fixloop_progress', { clear = true })
  if has('nvim-0.10') then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(ev)
        local client = vim.lsp.get_client_by_id(ev.data.client_id)
        if client and client.name == 'fixloop' then
          show_progress(ev.data.params.value)
        end
      end,
    })
  else
    -- 0.7-0.9: the default handler stores client.messages.progress[token] and fires this event
    local shown = {}
    vim.api.nvim_create_autocmd('User', {
      group = group,
      pattern = 'LspProgressUpdate',
      callback = function()
        for _, client in pairs(all_clients()) do
          if client.name == 'fixloop' then
            for token, p in pairs(client.messages.progress) do
              local key = tostring(p.message) .. tostring(p.done)
              if shown[token] ~= key then
                shown[token] = key
                show_progress({ kind = p.done and 'end' or 'report', message = p.message, title = p.title })
              end
            end
          end
        end
      end,
    })
  end
end

-- ---- setup ---------------------------------------------------------------------------------------

local function define_commands()
  vim.api.nvim_create_user_command('FixloopFix', function(a) M.fix(a.args) end,
    { nargs = '?', desc = 'fixloop: fix the failing test under the cursor (or the given test id)' })
  vim.api.nvim_create_user_command('FixloopCancel', function() M.cancel() end,
    { desc = 'fixloop: cancel the running fix' })
  vim.api.nvim_create_user_command('FixloopRunTests', function() M.run_tests() end,
    { desc = 'fixloop: run the tests of this file (or the project) and mark the failing ones' })
end

local started = {} -- 0.7: root_dir -> client id

local function start_api()
  if M.config.start_api and M.config.start_api ~= 'auto' then return M.config.start_api end
  if has('nvim-0.11') then return 'config' end
  if has('nvim-0.8') then return 'start' end
  return 'start_client'
end

local function start_for_buffer(bufnr)
  local config = client_config(bufnr)
  if start_api() == 'start' then
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  local id = started[config.root_dir]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(config)
    started[config.root_dir] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  define_commands()
  setup_progress()
  if start_api() == 'config' then
    local config = client_config(nil)
    config.filetypes = M.config.filetypes
    config.root_markers = M.config.root_markers
    vim.lsp.config('fixloop', config)
    vim.lsp.enable('fixloop')
    return
  end
  local group = vim.api.nvim_create_augroup('fixloop_start', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(ev) start_for_buffer(ev.buf) end,
  })
  -- buffers opened before setup()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.config.filetypes, vim.bo[buf].filetype) then
      start_for_buffer(buf)
    end
  end
end

return M
