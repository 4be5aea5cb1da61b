-- fixloop.progress: the running fix's latest line for a statusline, echoed unless a progress UI shows it.
local compat = require('fixloop.compat')
local config = require('fixloop.config')

local M = {}

local GROUP = 'fixloop_progress'
local group_id
local current = ''

--- The running fix's latest progress message ('' when idle).
function M.status()
  return current
end

local function others_listen(event, pattern)
  local ok, autocmds = pcall(vim.api.nvim_get_autocmds, { event = event, pattern = pattern })
  if not ok then return false end
  for _, autocmd in ipairs(autocmds) do
    if autocmd.group ~= group_id and autocmd.group_name ~= GROUP then return true end
  end
  return false
end

local STATUS_CALLS = { 'lsp.status', 'lsp_status', 'lsp_progress', 'lsp-progress', 'fixloop' }

local function shown_in_a_bar()
  for _, option in ipairs({ 'statusline', 'winbar', 'tabline' }) do
    local ok, value = pcall(function() return vim.o[option] end)
    if ok and type(value) == 'string' then
      for _, call in ipairs(STATUS_CALLS) do
        if value:find(call, 1, true) then return true end
      end
    end
  end
  return false
end

--- Which progress UI is there, or nil (see :help fixloop-progress): fidget.nvim or noice.nvim loaded,
--- another LspProgress (0.10+) / User LspProgressUpdate (0.7-0.9) listener, or a statusline, winbar or
--- tabline that calls vim.lsp.status(), an lsp progress component or require('fixloop').status().
function M.ui()
  for _, plugin in ipairs({ 'fidget', 'noice' }) do
    if package.loaded[plugin] then return plugin .. '.nvim' end
  end
  if compat.has('nvim-0.10') then
    if others_listen('LspProgress') then return 'an LspProgress autocmd' end
  elseif others_listen('User', 'LspProgressUpdate') then
    return 'a User LspProgressUpdate autocmd'
  end
  if shown_in_a_bar() then return 'the statusline' end
  return nil
end

--- Whether fixloop echoes progress itself (the `show_progress` option; 'auto' asks M.ui()).
function M.echoes()
  local option = config.options.show_progress
  if option == 'auto' or option == nil then return M.ui() == nil end
  return option == true
end

local function echo(msg)
  msg = msg:gsub('%s+', ' ')
  local width = math.max(vim.o.columns - 12, 20)
  if #msg > width then msg = msg:sub(1, width - 1) .. '…' end
  vim.api.nvim_echo({ { msg } }, false, {})
end

local function show(value)
  if type(value) ~= 'table' then return end
  local line
  if value.kind == 'end' then
    current = ''
    line = value.message or 'done'
  elseif value.message or value.title then
    current = value.message or value.title
    line = current
  end
  if line and M.echoes() then echo('fixloop: ' .. line) end
  if line then pcall(vim.cmd, 'redrawstatus') end
end

--- Listens to the fixloop client's progress (once; later calls do nothing).
function M.listen()
  if M.listening then return end
  M.listening = true
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  group_id = group
  if compat.has('nvim-0.10') then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(ev)
        local client = vim.lsp.get_client_by_id(ev.data.client_id)
        if client and client.name == 'fixloop' then show(ev.data.params.value) end
      end,
    })
    return
  end
  -- 0.7-0.9: the default handler stores client.messages.progress[token] and fires this event
  local shown = {}
  vim.api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'LspProgressUpdate',
    callback = function()
      for _, client in ipairs(compat.fixloop_clients()) do
        for token, p in pairs(client.messages.progress) do
          local key = tostring(p.message) .. tostring(p.done)
          if shown[token] ~= key then
            shown[token] = key
            show({ kind = p.done and 'end' or 'report', message = p.message, title = p.title })
          end
        end
      end
    end,
  })
end

return M
