-- fixloop's language-server config for Neovim 0.11+: `vim.lsp.enable('fixloop')` starts it for Python
-- buffers; change any field with vim.lsp.config('fixloop', { … }). See :help fixloop-lsp-enable.
--
--   vim.lsp.config('fixloop', { settings = { fixloop = { model = 'gpt-4o-mini', python = '.venv/bin/python' } } })
--   vim.lsp.enable('fixloop')
local config = require('fixloop.config')

local cmd = config.server_cmd(config.defaults)

---@type vim.lsp.Config
return {
  -- `fixloop serve` when fixloop is on PATH (pipx / uv tool install), else `python3 -m fixloop serve`
  cmd = cmd,
  filetypes = { 'python' },
  -- the nearest pytest project (pyproject.toml, setup.cfg, pytest.ini, tox.ini), else the repository
  root_markers = config.ROOT_MARKERS,
  -- the `fixloop` section: model, baseUrl, python, maxSteps, … (the main README's settings table)
  settings = { fixloop = {} },
  on_attach = function()
    require('fixloop').attach() -- :FixloopFix & co., progress, events (idempotent)
  end,
  on_exit = function(code, signal)
    require('fixloop').on_exit(code, signal, cmd)
  end,
}
