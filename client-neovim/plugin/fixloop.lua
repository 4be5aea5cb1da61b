-- fixloop: :FixloopFix, :FixloopRunTests, :FixloopCancel, the progress listener and the events.
-- Starting the server is up to `require('fixloop').setup()` or, on 0.11+, `vim.lsp.enable('fixloop')`.
if vim.g.loaded_fixloop then return end
vim.g.loaded_fixloop = true

require('fixloop').attach()
