-- fixloop.health: `:checkhealth fixloop`: Neovim, the server command and its version, the client,
-- the endpoint settings and the progress display, each with what to do when it is wrong.
local compat = require('fixloop.compat')
local config = require('fixloop.config')

local M = {}

local health = vim.health or require('health')
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local info = health.info or health.report_info
local warn = health.warn or health.report_warn
local error = health.error or health.report_error

local function check_neovim()
  start('Neovim')
  local version = compat.version()
  if compat.has('nvim-0.11') then
    ok(('Neovim %s: vim.lsp.enable("fixloop") works (lsp/fixloop.lua), LspProgress for progress UIs'):format(version))
  elseif compat.has('nvim-0.8') then
    ok(('Neovim %s: use require("fixloop").setup() (vim.lsp.enable needs 0.11)'):format(version))
  elseif compat.has('nvim-0.7') then
    ok(('Neovim %s: use require("fixloop").setup(); there is no progress UI before 0.10, '
      .. 'fixloop echoes the thoughts itself'):format(version))
  else
    error(('Neovim %s is too old'):format(version), { 'fixloop needs Neovim 0.7 or newer' })
  end
  if #vim.api.nvim_get_runtime_file('doc/fixloop.txt', true) > 0 then
    ok(':help fixloop is on the runtimepath')
  end
end

--- The command fixloop starts: the resolved vim.lsp.config (0.11), else setup()'s, else the default.
local function server_cmd()
  local origin = config.from_setup and 'from setup()' or 'the default'
  if compat.has('nvim-0.11') then
    local found, resolved = pcall(function() return vim.lsp.config.fixloop end)
    if found and type(resolved) == 'table' and type(resolved.cmd) == 'table' then
      return resolved.cmd, config.from_setup and origin or 'from vim.lsp.config("fixloop")'
    end
  end
  return config.server_cmd(), origin
end

local function check_server()
  start('fixloop language server')
  local cmd, origin = server_cmd()
  local line = table.concat(cmd, ' ')
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    error(('%s (%s): %s is not executable'):format(line, origin, cmd[1]), {
      config.INSTALL_HINT,
      'or point setup({ server_python = … }) / vim.lsp.config("fixloop", { cmd = … }) at an '
        .. 'interpreter or command that has fixloop',
    })
    return
  end
  local version_cmd = config.version_cmd(cmd)
  if not version_cmd then
    info(('%s (%s): a custom command, version not checked'):format(line, origin))
    return
  end
  local code, out = compat.run(version_cmd, 15000)
  local version = code == 0 and out and out:match('fixloop%s+(%S+)')
  if version == config.VERSION then
    ok(('fixloop %s: %s (%s)'):format(version, line, origin))
  elseif version then
    warn(('fixloop %s: %s (%s), but this plugin is fixloop %s'):format(version, line, origin, config.VERSION),
      { 'install the same release of fixloop and of this plugin' })
  else
    error(('%s (%s) does not run fixloop: %s'):format(line, origin,
      (out or ''):gsub('\n', ' '):sub(1, 200)), {
      config.INSTALL_HINT,
      'or set setup({ server_python = … }) to an interpreter that has fixloop',
    })
  end
end

local function check_python(settings)
  local python = settings.python
  if python == nil and type(config.options.python) == 'function' then
    info('python: a function of the project root, resolved when the server starts')
    return
  end
  if type(python) ~= 'string' or python == '' then
    info('python: not set; the server finds the project\'s interpreter (.venv, $VIRTUAL_ENV, …)')
    return
  end
  if vim.fn.executable(python) == 0 then
    error(('python: %s is not executable'):format(python),
      { 'set setup({ python = … }) to the project\'s interpreter, e.g. .venv/bin/python' })
    return
  end
  local code = compat.run({ python, '-c', 'import pytest' }, 15000)
  if code == 0 then
    ok(('python: %s (has pytest)'):format(python))
  else
    warn(('python: %s has no pytest'):format(python), { ('%s -m pip install pytest'):format(python) })
  end
end

local function check_clients()
  start('fixloop client')
  if compat.has('nvim-0.11') and vim.lsp.is_enabled then
    if vim.lsp.is_enabled('fixloop') then ok('vim.lsp.enable("fixloop") is on') else
      info('vim.lsp.enable("fixloop") is off (fine when setup() starts it on another API)') end
  end
  local clients = compat.fixloop_clients()
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_count(client.attached_buffers or {})
    local server = client.server_info and client.server_info.version
    ok(('client %d attached to %d buffer(s), root %s%s'):format(client.id, buffers,
      client.config.root_dir or '?', server and (', server ' .. server) or ''))
  end
  if #clients > 0 then return clients end
  local python_buffers = 0
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype == 'python' then python_buffers = python_buffers + 1 end
  end
  if python_buffers > 0 then
    warn(('no fixloop client, although %d Python buffer(s) are open'):format(python_buffers), {
      'call require("fixloop").setup() in your config, or vim.lsp.enable("fixloop") on 0.11+',
      'a server that fails to start says why in :LspLog (or the file vim.lsp.get_log_path())',
    })
  else
    info('no fixloop client yet: it starts when you open a Python file')
  end
  return clients
end

local function host(url)
  return url and url:match('^https?://([^/:]+)') or nil
end

local function check_endpoint(settings, env)
  start('endpoint')
  local model = settings.model or env.FIXLOOP_MODEL
  local base_url = settings.baseUrl or settings.apiBase or env.FIXLOOP_BASE_URL or env.OPENAI_BASE_URL
  if not model or model == '' then
    warn('no model in settings or FIXLOOP_MODEL', {
      'set settings = { model = "…" } (and baseUrl for a non-OpenAI endpoint), or model = "local" '
        .. 'for the managed local model; [tool.fixloop] in pyproject.toml also works',
    })
  else
    ok(('model: %s'):format(model))
  end
  if model and model:match('^local') then return end
  ok(('endpoint: %s'):format(base_url or 'the OpenAI API (no baseUrl)'))
  local key_env = settings.apiKeyEnv
  local names = key_env and { key_env } or { 'FIXLOOP_API_KEY', 'OPENAI_API_KEY' }
  for _, name in ipairs(names) do
    if env[name] and env[name] ~= '' then
      ok(('API key: $%s is set'):format(name))
      return
    end
  end
  local where = host(base_url)
  if where == '127.0.0.1' or where == 'localhost' then
    info(('no API key ($%s); fine for a local server'):format(table.concat(names, ', $')))
  else
    warn(('no API key: $%s is not set'):format(table.concat(names, ', $')), {
      'export it before starting Neovim, or pass it with setup({ cmd_env = { FIXLOOP_API_KEY = … } }); '
        .. 'keys never go in settings',
    })
  end
end

local function check_progress()
  start('progress display')
  local progress = require('fixloop.progress')
  local ui = progress.ui()
  local option = config.options.show_progress
  if progress.echoes() then
    ok(('fixloop echoes the thoughts in the message area (show_progress = %s%s)'):format(
      tostring(option), ui and (', although ' .. ui .. ' is there') or ', no progress UI found'))
  else
    ok(('fixloop does not echo progress: %s'):format(ui and (ui .. ' shows it') or 'show_progress = false'))
  end
end

function M.check()
  check_neovim()
  check_server()
  local clients = check_clients()
  local settings = vim.deepcopy(config.server_settings())
  local env = vim.tbl_extend('force', vim.fn.environ(), config.options.cmd_env or {})
  local client = clients[1]
  if client then
    settings = vim.tbl_extend('force', settings, compat.settings(client).fixloop or {})
    env = vim.tbl_extend('force', env, client.config.cmd_env or {})
  end
  start('project interpreter')
  check_python(settings)
  check_endpoint(settings, env)
  check_progress()
end

return M
