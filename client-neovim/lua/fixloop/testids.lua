-- fixloop.testids: the failing tests the server has reported (its diagnostics' data.testId), for completion.
local M = {}

local function test_id_of(diagnostic)
  local lsp = diagnostic.user_data and diagnostic.user_data.lsp
  local data = lsp and lsp.data
  return type(data) == 'table' and type(data.testId) == 'string' and data.testId or nil
end

--- Every failing test known from fixloop diagnostics: a list of { test_id, bufnr, lnum }, sorted by id.
function M.failing()
  local found, seen = {}, {}
  for _, d in ipairs(vim.diagnostic.get(nil)) do
    local id = d.source == 'fixloop' and test_id_of(d) or nil
    local key = id and (id .. '\0' .. vim.api.nvim_buf_get_name(d.bufnr)) or nil
    if key and not seen[key] then
      seen[key] = true
      table.insert(found, { test_id = id, bufnr = d.bufnr, lnum = d.lnum })
    end
  end
  table.sort(found, function(a, b) return a.test_id < b.test_id end)
  return found
end

--- The failing test `test_id` (its buffer tells which workspace folder it belongs to), or nil.
function M.find(test_id)
  for _, failing in ipairs(M.failing()) do
    if failing.test_id == test_id then return failing end
  end
end

--- :FixloopFix completion: failing test ids containing what was typed (prefix matches first).
function M.complete(arg_lead)
  local prefix, contains, seen = {}, {}, {}
  for _, failing in ipairs(M.failing()) do
    local id = failing.test_id
    if not seen[id] then
      seen[id] = true
      if vim.startswith(id, arg_lead) then
        table.insert(prefix, id)
      elseif arg_lead ~= '' and id:find(arg_lead, 1, true) then
        table.insert(contains, id)
      end
    end
  end
  return vim.list_extend(prefix, contains)
end

return M
