-- The sysbench 1.0.20 Lua API as versus provides it, written for versus: the `sysbench` table, its SQL
-- objects, random numbers, command-line helpers and the 0.5-era globals. Loaded into every Lua state
-- before the user's script; `V` holds the Rust primitives it is built on.
local V = ...

local ffi = require("ffi")
ffi.cdef[[
typedef enum
{
  SB_CNT_OTHER,
  SB_CNT_READ,
  SB_CNT_WRITE,
  SB_CNT_TRX,
  SB_CNT_ERROR,
  SB_CNT_RECONNECT,
  SB_CNT_BYTES_READ,
  SB_CNT_BYTES_WRITTEN,
  SB_CNT_MAX
} sb_counter_type;
]]

sysbench.error = { NONE = 0, RESTART_EVENT = 1 }
sysbench.hooks = sysbench.hooks or {}

-- Command line --------------------------------------------------------------------------------------
local cmdline = sysbench.cmdline
cmdline.ARG_NULL, cmdline.ARG_BOOL, cmdline.ARG_INT, cmdline.ARG_SIZE = 0, 1, 2, 3
cmdline.ARG_DOUBLE, cmdline.ARG_STRING, cmdline.ARG_LIST, cmdline.ARG_FILE, cmdline.ARG_MAX = 4, 5, 6, 7, 8
cmdline.PARALLEL_COMMAND = true

function cmdline.command_defined(name)
  return type(cmdline.commands) == "table" and cmdline.commands[name] ~= nil
end

function cmdline.command_parallel(name)
  local c = cmdline.command_defined(name) and cmdline.commands[name]
  return c and c[2] == cmdline.PARALLEL_COMMAND or false
end

function cmdline.call_command(name)
  if not cmdline.command_defined(name) then
    return false
  end
  local f = cmdline.commands[name][1]
  if type(f) ~= "function" then
    error("command '" .. name .. "' is not a function")
  end
  return f()
end

function cmdline.read_cmdline_options()
  return true
end

function cmdline.print_test_options()
  io.write(V.options_help())
end

-- Random numbers ------------------------------------------------------------------------------------
local rand = {}
sysbench.rand = rand
rand.uniform_uint64 = V.rand_u64
rand.uniform = V.rand_uniform
rand.default = V.rand_default
function rand.gaussian(a, b) return V.rand_kind("gaussian", a, b) end
function rand.special(a, b) return V.rand_kind("special", a, b) end
function rand.pareto(a, b) return V.rand_kind("pareto", a, b) end
function rand.zipfian(a, b) return V.rand_kind("zipfian", a, b) end
rand.uniform_double = V.rand_double
rand.string = V.rand_string
rand.varstring = V.rand_varstring
rand.unique = V.rand_unique

-- SQL -----------------------------------------------------------------------------------------------
local sql = {}
sysbench.sql = sql
sql.type = {
  NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6, TIME = 7, DATE = 8,
  DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
}
sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }

local BULK_LIMIT = 512 * 1024 - 1

local Con, Rs, Stmt, Param = {}, {}, {}, {}
Con.__index, Rs.__index, Stmt.__index, Param.__index = Con, Rs, Stmt, Param

-- Raises sysbench's error for a failed statement: a table that restarts the event when the error is
-- ignorable, a message otherwise.
local function raise(con, kind, errno, state, msg, query)
  con.sql_errno, con.sql_state, con.sql_errmsg = errno, state, msg
  if kind == "restart" then
    local e = { errcode = sysbench.error.RESTART_EVENT, sql_errno = errno, sql_state = state,
                sql_errmsg = msg, connection = con, query = query }
    V.last_err = e
    error(e, 3)
  elseif kind == "stop" then
    error({ errcode = "versus_stop", sql_errmsg = msg }, 3)
  end
  error(string.format("SQL error, errno = %d, state = '%s': %s", errno, state, msg), 3)
end

local function rs_new(rows, nfields)
  return setmetatable({ nrows = #rows, nfields = nfields, _rows = rows, _at = 0 }, Rs)
end

function Rs:fetch_row()
  self._at = self._at + 1
  return self._rows[self._at]
end

function Rs:free() self._rows = {} end

function Con:query(q)
  local ok, a, b, c, d = self._raw:query(q)
  if not ok then raise(self, a, b, c, d, q) end
  if a == nil then return nil end
  return rs_new(a, b)
end

function Con:query_row(q)
  local rs = self:query(q)
  if rs == nil then return nil end
  local row = rs:fetch_row()
  if row == nil then return nil end
  return unpack(row, 1, rs.nfields)
end

function Con:bulk_insert_init(q)
  self._bulk, self._parts, self._len = q, {}, #q
end

function Con:_bulk_flush()
  if #self._parts > 0 then
    self:query(self._bulk .. table.concat(self._parts, ","))
    self._parts, self._len = {}, #self._bulk
  end
end

function Con:bulk_insert_next(v)
  if self._bulk == nil then error("bulk_insert_next() called before bulk_insert_init()", 2) end
  if #self._parts > 0 and self._len + 1 + #v > BULK_LIMIT then
    self:_bulk_flush()
  end
  self._parts[#self._parts + 1] = v
  self._len = self._len + #v + (#self._parts > 1 and 1 or 0)
end

function Con:bulk_insert_done()
  if self._bulk ~= nil then
    self:_bulk_flush()
    self._bulk = nil
  end
end

function Con:prepare(q)
  local ok, a, b, c, d = self._raw:prepare(q)
  if not ok then raise(self, a, b, c, d, q) end
  return setmetatable({ _con = self, _id = a, _sql = q, _params = {} }, Stmt)
end

function Con:reconnect()
  local ok, a, b, c, d = self._raw:reconnect()
  if not ok then raise(self, a, b, c, d, "reconnect") end
end

function Con:disconnect() self._raw:disconnect() end

function Con:check_error(rs, q)
  return rs
end

-- Parameters sent as text (the others as integers).
local text_types = { [sql.type.CHAR] = true, [sql.type.VARCHAR] = true, [sql.type.FLOAT] = true,
                     [sql.type.DOUBLE] = true, [sql.type.TIME] = true, [sql.type.DATE] = true,
                     [sql.type.DATETIME] = true, [sql.type.TIMESTAMP] = true }

function Stmt:bind_create(t, len)
  return setmetatable({ _type = t, _len = len, _text = text_types[t] or false }, Param)
end

function Stmt:bind_param(...)
  self._params, self._n = { ... }, select("#", ...)
end

local function value(p)
  local x = p._v
  if p._text and x ~= nil then return tostring(x) end
  return x
end

-- Up to four parameters go to the driver without a table per execution (the statements of the bundled
-- scripts take one to four).
function Stmt:execute()
  local p, n, raw, id = self._params, self._n or 0, self._con._raw, self._id
  local ok, a, b, c, d
  if n == 0 then
    ok, a, b, c, d = raw:execute(id)
  elseif n == 1 then
    ok, a, b, c, d = raw:execute(id, value(p[1]))
  elseif n == 2 then
    ok, a, b, c, d = raw:execute(id, value(p[1]), value(p[2]))
  elseif n == 3 then
    ok, a, b, c, d = raw:execute(id, value(p[1]), value(p[2]), value(p[3]))
  elseif n == 4 then
    ok, a, b, c, d = raw:execute(id, value(p[1]), value(p[2]), value(p[3]), value(p[4]))
  else
    local v = {}
    for i = 1, n do v[i] = value(p[i]) end
    ok, a, b, c, d = raw:execute(id, unpack(v, 1, n))
  end
  if not ok then raise(self._con, a, b, c, d, self._sql) end
  return nil
end

function Stmt:close() end

function Param:set(v) self._v = v end
function Param:set_rand_str(fmt) self._v = V.rand_string(fmt) end

local Driver = {}
Driver.__index = Driver
function Driver:name() return "mysql" end
function Driver:connect()
  return setmetatable({ _raw = V.connect(), driver = self }, Con)
end

function sql.driver(name)
  if name ~= nil and name ~= "mysql" then
    error("versus runs Lua scripts with the mysql driver only, not '" .. tostring(name) .. "'", 2)
  end
  return setmetatable({}, Driver)
end

-- Reports -------------------------------------------------------------------------------------------
-- `stat` holds one interval's figures: counts over `time_interval` seconds, latency_pct in seconds.
local function per_s(stat)
  local t = stat.time_interval > 0 and stat.time_interval or 1
  return stat.events / t, (stat.reads + stat.writes + stat.other) / t, stat.reads / t, stat.writes / t,
    stat.other / t, stat.errors / t, stat.reconnects / t
end

function sysbench.report_default(stat)
  local tps, qps, r, w, o, e, rc = per_s(stat)
  io.write(string.format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) " ..
    "lat (ms,%u%%): %4.2f err/s: %4.2f reconn/s: %4.2f\n", stat.time_total, stat.threads_running, tps, qps,
    r, w, o, sysbench.opt.percentile, stat.latency_pct * 1000, e, rc))
end

function sysbench.report_csv(stat)
  local tps, qps, r, w, o, e, rc = per_s(stat)
  io.write(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f\n", stat.time_total,
    stat.threads_running, tps, qps, r, w, o, stat.latency_pct * 1000, e, rc))
end

function sysbench.report_json(stat)
  local tps, qps, r, w, o, e, rc = per_s(stat)
  io.write(string.format('{"time": %4.0f, "threads": %u, "tps": %4.2f, "qps": {"total": %4.2f, ' ..
    '"reads": %4.2f, "writes": %4.2f, "other": %4.2f}, "latency": %4.2f, "errors": %4.2f, ' ..
    '"reconnects": %4.2f},\n', stat.time_total, stat.threads_running, tps, qps, r, w, o,
    stat.latency_pct * 1000, e, rc))
end

-- The legacy C API and the 0.5-era globals (sysbench.compat) ---------------------------------------
local db = {}
sysbench.db = db
db.DB_ERROR_NONE, db.DB_ERROR_RESTART_TRANSACTION, db.DB_ERROR_FAILED = 0, 1, 2
local legacy_con
local function legacy()
  if legacy_con == nil then legacy_con = sql.driver():connect() end
  return legacy_con
end
function db.connect() legacy() end
function db.disconnect() if legacy_con then legacy_con:disconnect(); legacy_con = nil end end
function db.query(q) return legacy():query(q) end
function db.bulk_insert_init(q) legacy():bulk_insert_init(q) end
function db.bulk_insert_next(v) legacy():bulk_insert_next(v) end
function db.bulk_insert_done() legacy():bulk_insert_done() end
function db.prepare(q) return legacy():prepare(q) end
function db.bind_param(stmt, params) stmt:bind_param(unpack(params)) end
function db.execute(stmt) return stmt:execute() end
function db.close(stmt) stmt:close() end
function db.store_results(rs) return rs end
function db.free_results(rs) if rs then rs:free() end end

db_connect, db_disconnect, db_query = db.connect, db.disconnect, db.query
db_bulk_insert_init, db_bulk_insert_next, db_bulk_insert_done =
  db.bulk_insert_init, db.bulk_insert_next, db.bulk_insert_done
db_prepare, db_bind_param, db_execute, db_close = db.prepare, db.bind_param, db.execute, db.close
db_store_results, db_free_results = db.store_results, db.free_results
DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION, DB_ERROR_FAILED = 0, 1, 2
sb_rand = rand.default
sb_rand_uniform = rand.uniform
sb_rand_gaussian = rand.gaussian
sb_rand_special = rand.special
sb_rand_str = rand.string
sb_rand_uniq = function() return rand.unique() end
thread_id = sysbench.tid
test = sysbench.cmdline.script_path

-- Histograms ----------------------------------------------------------------------------------------
local Histogram = {}
Histogram.__index = Histogram
sysbench.histogram = {}
function sysbench.histogram.new(size, min, max)
  return setmetatable({ _v = {}, _min = min, _max = max }, Histogram)
end
function Histogram:update(v) self._v[#self._v + 1] = v end
function Histogram:print()
  table.sort(self._v)
  local n = #self._v
  io.write(string.format("histogram: %d values", n))
  if n > 0 then
    io.write(string.format(", min %g, median %g, max %g", self._v[1], self._v[math.ceil(n / 2)], self._v[n]))
  end
  io.write("\n")
end
