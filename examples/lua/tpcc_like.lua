#!/usr/bin/env sysbench
-- A small TPC-C-like workload for sysbench 1.0 and versus, written for versus's tests and examples.
-- It uses what the popular third-party TPC-C scripts use: options (scale, tables, use_fk, trx_level,
-- enable_purge), custom commands (a parallel prepare, check), bulk inserts, foreign keys, the isolation
-- level set per connection, ffi.cdef of sb_counter_inc, deadlocks retried through ignorable errors and
-- a sibling module loaded with require. It is not a TPC-C implementation: figures are not tpmC.

local ffi = require("ffi")
ffi.cdef[[
void sb_counter_inc(int, sb_counter_type);
int usleep(unsigned int);
]]

require("tpcc_like_common")

sysbench.cmdline.options = {
  scale = {"Warehouses", 2},
  tables = {"Sets of tables", 1},
  use_fk = {"Use foreign keys", 1},
  trx_level = {"Transaction isolation level (RC, RR or SER)", "RR"},
  enable_purge = {"Delete delivered orders now and then", "no"},
  mysql_storage_engine = {"Storage engine", "innodb"},
}

sysbench.cmdline.commands = {
  prepare = {function() cmd_prepare() end, sysbench.cmdline.PARALLEL_COMMAND},
  check = {function() cmd_check() end, sysbench.cmdline.PARALLEL_COMMAND},
}

local levels = { RC = "READ COMMITTED", RR = "REPEATABLE READ", SER = "SERIALIZABLE" }

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  local level = levels[sysbench.opt.trx_level]
  if level == nil then
    error("--trx_level must be RC, RR or SER, not " .. tostring(sysbench.opt.trx_level))
  end
  con:query("SET SESSION TRANSACTION ISOLATION LEVEL " .. level)
  con:query("SET autocommit = 0")
end

function thread_done()
  con:disconnect()
end

function cleanup()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  for t = 1, sysbench.opt.tables do
    for _, name in ipairs({"order_line", "new_orders", "orders", "history", "stock", "customer",
                           "district", "item", "warehouse"}) do
      print(string.format("Dropping table '%s%d'...", name, t))
      con:query(string.format("DROP TABLE IF EXISTS %s%d", name, t))
    end
  end
end

function event()
  local t = sysbench.rand.uniform(1, sysbench.opt.tables)
  local w = sysbench.rand.uniform(1, sysbench.opt.scale)
  local pick = sysbench.rand.uniform(1, 23)
  if sysbench.opt.enable_purge == "yes" and sysbench.rand.uniform(1, 24) == 24 then
    purge(t, w)
  elseif pick <= 10 then
    new_order(t, w)
  elseif pick <= 20 then
    payment(t, w)
  elseif pick == 21 then
    order_status(t, w)
  elseif pick == 22 then
    delivery(t, w)
  else
    stock_level(t, w)
  end
end

function sysbench.hooks.before_restart_event(err)
  con:query("ROLLBACK")
end
