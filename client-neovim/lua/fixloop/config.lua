-- fixloop.config: the options of setup(), the server command line, the project root and the client config.
local M = {}

-- The fixloop release this plugin belongs to; :checkhealth warns when the server is another one.
-- The same as server/fixloop/__init__.py and client-vscode/package.json (a unit test checks).
M.VERSION = '0.1.0'

M.INSTALL_HINT = 'install fixloop: `pipx install <path to the fixloop checkout or its wheel>` '
  .. "(or `uv tool install …`); see the README's Install section"

-- The project markers of pytest (nearest one wins), then the repository.
M.ROOT_MARKERS = { { 'pyproject.toml', 'setup.cfg', 'pytest.ini', 'tox.ini' }, '.git' }

M.defaults = {
  -- the project's interpreter (tests run with it); sent as the `python` setting. A path, or a
  -- function(root_dir) returning one; nil: the server finds it (.venv, $VIRTUAL_ENV, …)
  python = nil,
  -- an interpreter with fixloop installed, to run `python -m fixloop serve`
  server_python = nil,
  -- the full server command line; nil: `fixloop serve` when `fixloop` is on PATH, else
  -- { server_python or python or 'python3', '-m', 'fixloop', 'serve' }
  cmd = nil,
  -- extra environment for the server (FIXLOOP_BASE_URL, FIXLOOP_MODEL, FIXLOOP_API_KEY, …)
  cmd_env = nil,
  -- the settings object of the main README (model, baseUrl, maxSteps, …); sent as
  -- initializationOptions and as the `fixloop` section of workspace/configuration
  settings = {},
  filetypes = { 'python' },
  root_markers = M.ROOT_MARKERS,
  -- echo progress (thoughts, actions) in the message area: 'auto' (unless a progress UI is there,
  -- see :help fixloop-progress), true (always), false (never)
  show_progress = 'auto',
  handlers = nil,
  on_attach = nil,
  -- called as on_exit_hook(code, signal) when the server process ends
  on_exit_hook = nil,
  -- 'auto' (by version), 'config' (vim.lsp.config/enable, 0.11+), 'start' (vim.lsp.start, 0.8+),
  -- 'start_client' (vim.lsp.start_client)
  start_api = 'auto',
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  M.from_setup = true
  return M.options
end

--- The server command line for `opts` (see the `cmd` option).
function M.server_cmd(opts)
  opts = opts or M.options
  if opts.cmd then return opts.cmd end
  if opts.server_python then return { opts.server_python, '-m', 'fixloop', 'serve' } end
  local exe = vim.fn.exepath('fixloop')
  if exe ~= '' then return { exe, 'serve' } end
  local python = type(opts.python) == 'string' and opts.python or 'python3'
  return { python, '-m', 'fixloop', 'serve' }
end

--- The command that prints the server's version, or nil for a custom `cmd`.
function M.version_cmd(cmd)
  local last = cmd[#cmd]
  if last ~= 'serve' then return nil end
  local out = vim.list_slice(cmd, 1, #cmd - 1)
  table.insert(out, '--version')
  return out
end

local function find_upward(dir, names)
  while dir and dir ~= '' do
    for _, name in ipairs(names) do
      if vim.loop.fs_stat(dir .. '/' .. name) then return dir end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then return nil end
    dir = parent
  end
end

--- The workspace folder of `bufnr`: the nearest pytest project marker, else the repository, else
--- the file's folder (what `root_markers` does on 0.11, for 0.7-0.10).
function M.root_dir(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.loop.cwd()
  for _, group in ipairs(markers or M.options.root_markers) do
    local found = find_upward(start, type(group) == 'table' and group or { group })
    if found then return found end
  end
  return start
end

--- before_init: resolves a `python` function for this client's root and sends the result.
local function python_for_root(python)
  return function(params, config)
    local path = python(config.root_dir)
    if type(path) ~= 'string' or path == '' then return end
    config.settings = config.settings or {}
    config.settings.fixloop = config.settings.fixloop or {}
    config.settings.fixloop.python = path
    if type(params.initializationOptions) == 'table' then params.initializationOptions.python = path end
  end
end

--- The settings object sent to the server (`python` included when it is a path).
function M.server_settings(opts)
  opts = opts or M.options
  local settings = vim.deepcopy(opts.settings or {})
  if type(opts.python) == 'string' and opts.python ~= '' and settings.python == nil then
    settings.python = opts.python
  end
  return settings
end

--- The LSP client config (vim.lsp.ClientConfig / vim.lsp.Config) for `opts`.
function M.client_config(opts, extra)
  opts = opts or M.options
  local settings = M.server_settings(opts)
  local config = {
    name = 'fixloop',
    cmd = M.server_cmd(opts),
    cmd_env = opts.cmd_env,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    init_options = settings,
    settings = { fixloop = vim.deepcopy(settings) },
    handlers = opts.handlers,
  }
  if type(opts.python) == 'function' then config.before_init = python_for_root(opts.python) end
  return vim.tbl_extend('force', config, extra or {})
end

return M
