-- fixloop.compat: one place for the Neovim API differences between 0.7 and 0.11.
local M = {}

function M.has(feature)
  return vim.fn.has(feature) == 1
end

--- Every running LSP client (`vim.lsp.get_active_clients` was renamed in 0.10).
function M.clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return get()
end

--- The running fixloop clients.
function M.fixloop_clients()
  local found = {}
  for _, client in pairs(M.clients()) do
    if client.name == 'fixloop' then table.insert(found, client) end
  end
  return found
end

function M.request(client, method, params, handler, bufnr)
  if M.has('nvim-0.11') then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

function M.notify_server(client, method, params)
  if M.has('nvim-0.11') then return client:notify(method, params) end
  return client.notify(method, params)
end

--- The client's settings table (`client.settings` on 0.10+, `client.config.settings` before).
function M.settings(client)
  return client.settings or (client.config and client.config.settings) or {}
end

--- Fires `User <pattern>`; `data` reaches the callback as `ev.data` on 0.8+ (0.7 has no `data`).
function M.fire(pattern, data)
  local opts = { pattern = pattern, modeline = false }
  if M.has('nvim-0.8') then opts.data = data end
  vim.api.nvim_exec_autocmds('User', opts)
end

--- "0.11.4"
function M.version()
  local v = vim.version()
  return ('%d.%d.%d'):format(v.major, v.minor, v.patch)
end

--- Runs `cmd` (a list) and returns (exit code, stdout+stderr), or (nil, reason) after `timeout_ms`.
function M.run(cmd, timeout_ms)
  local out = {}
  local collect = function(_, data) for _, line in ipairs(data or {}) do if line ~= '' then table.insert(out, line) end end end
  local ok, job = pcall(vim.fn.jobstart, cmd, { stdout_buffered = true, stderr_buffered = true,
    on_stdout = collect, on_stderr = collect })
  if not ok or job <= 0 then return nil, ('cannot run %s'):format(cmd[1]) end
  local code = vim.fn.jobwait({ job }, timeout_ms or 10000)[1]
  if code == -1 then
    vim.fn.jobstop(job)
    return nil, ('%s did not answer within %d s'):format(table.concat(cmd, ' '), (timeout_ms or 10000) / 1000)
  end
  return code, table.concat(out, '\n')
end

return M
