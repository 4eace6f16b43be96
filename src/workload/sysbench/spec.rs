//! The table of sysbench 1.0.20 options (plus the master-only ones versus supports): names, kinds,
//! defaults and help texts. Parsing, validation and `help` output are all driven by it.

/// The value kind of an option, as sysbench declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `on|off|true|false|1|0`; a bare `--flag` means on.
    Bool,
    /// An integer (strtol in sysbench; must be fully numeric).
    Int,
    /// A number (a Lua script option; `1e6` is accepted, values are truncated where counts are meant).
    Num,
    /// Free text.
    Str,
    /// Comma-separated list.
    List,
    /// Size with an optional K/M/G/T suffix.
    Size,
}

/// Which help block an option belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// General options.
    General,
    /// Pseudo-random number generator options.
    Rand,
    /// Log options.
    Log,
    /// General database options.
    Db,
    /// MySQL driver options.
    Mysql,
    /// Script (workload) options.
    Script,
    /// versus additions.
    Versus,
}

/// Which tests accept a script option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every test (general, driver options).
    All,
    /// The tests built on oltp_common (all but bulk_insert).
    Oltp,
    /// Only select_random_points.
    RandomPoints,
    /// Only select_random_ranges.
    RandomRanges,
}

/// One option.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Canonical name with underscores, without dashes.
    pub name: &'static str,
    /// Value kind.
    pub kind: Kind,
    /// Default as sysbench prints it in help (`None`: no default shown).
    pub default: Option<&'static str>,
    /// Help text.
    pub help: &'static str,
    /// Help block.
    pub group: Group,
    /// Which tests accept it.
    pub scope: Scope,
}

const fn o(
    name: &'static str,
    kind: Kind,
    default: Option<&'static str>,
    help: &'static str,
    group: Group,
    scope: Scope,
) -> Spec {
    Spec { name, kind, default, help, group, scope }
}

use Group::*;
use Kind::*;
use Scope::*;

/// Every option versus accepts after `versus sysbench`.
pub const SPECS: &[Spec] = &[
    o("threads", Int, Some("1"), "number of threads to use", General, All),
    o("events", Int, Some("0"), "limit for total number of events", General, All),
    o("time", Int, Some("10"), "limit for total execution time in seconds", General, All),
    o(
        "warmup_time",
        Int,
        Some("0"),
        "execute events for this many seconds with statistics disabled before the actual benchmark run with statistics enabled",
        General,
        All,
    ),
    o(
        "forced_shutdown",
        Str,
        Some("off"),
        "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable",
        General,
        All,
    ),
    o("thread_stack_size", Size, Some("64K"), "size of stack per thread", General, All),
    o("thread_init_timeout", Int, Some("30"), "wait time in seconds for worker threads to initialize", General, All),
    o("rate", Int, Some("0"), "average transactions rate. 0 for unlimited rate", General, All),
    o(
        "report_interval",
        Int,
        Some("0"),
        "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports",
        General,
        All,
    ),
    o(
        "report_checkpoints",
        List,
        Some(""),
        "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default.",
        General,
        All,
    ),
    o("debug", Bool, Some("off"), "print more debugging info", General, All),
    o("validate", Bool, Some("off"), "perform validation checks where possible", General, All),
    o("help", Bool, Some("off"), "print help and exit", General, All),
    o("version", Bool, Some("off"), "print version and exit", General, All),
    o("config_file", Str, None, "File containing command line options", General, All),
    o("tx_rate", Int, Some("0"), "deprecated alias for --rate", General, All),
    o("max_requests", Int, Some("0"), "deprecated alias for --events", General, All),
    o("max_time", Int, Some("0"), "deprecated alias for --time", General, All),
    o("num_threads", Int, Some("1"), "deprecated alias for --threads", General, All),
    o(
        "rand_type",
        Str,
        Some("special"),
        "random numbers distribution {uniform,gaussian,special,pareto,zipfian}",
        Rand,
        All,
    ),
    o("rand_spec_iter", Int, Some("12"), "number of iterations used for numbers generation", Rand, All),
    o(
        "rand_spec_pct",
        Int,
        Some("1"),
        "percentage of values to be treated as 'special' (for special distribution)",
        Rand,
        All,
    ),
    o("rand_spec_res", Int, Some("75"), "percentage of 'special' values to use (for special distribution)", Rand, All),
    o(
        "rand_seed",
        Int,
        Some("0"),
        "seed for random number generator. When 0, the current time is used as a RNG seed.",
        Rand,
        All,
    ),
    o("rand_pareto_h", Num, Some("0.2"), "parameter h for pareto distribution", Rand, All),
    o(
        "rand_zipfian_exp",
        Num,
        Some("0.8"),
        "shape parameter (exponent, theta) for the Zipfian distribution",
        Rand,
        All,
    ),
    o("verbosity", Int, Some("3"), "verbosity level {5 - debug, 0 - only critical messages}", Log, All),
    o(
        "percentile",
        Int,
        Some("95"),
        "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations",
        Log,
        All,
    ),
    o("histogram", Bool, Some("off"), "print latency histogram in report", Log, All),
    o(
        "db_driver",
        Str,
        Some("mysql"),
        "specifies database driver to use ('help' to get list of available drivers)",
        Db,
        All,
    ),
    o("db_ps_mode", Str, Some("auto"), "prepared statements usage mode {auto, disable}", Db, All),
    o("db_debug", Bool, Some("off"), "print database-specific debug information", Db, All),
    o("mysql_host", List, Some("localhost"), "MySQL server host", Mysql, All),
    o("mysql_port", List, Some("3306"), "MySQL server port", Mysql, All),
    o("mysql_socket", List, None, "MySQL socket", Mysql, All),
    o("mysql_user", Str, Some("sbtest"), "MySQL user", Mysql, All),
    o("mysql_password", Str, Some(""), "MySQL password", Mysql, All),
    o("mysql_db", Str, Some("sbtest"), "MySQL database name", Mysql, All),
    o(
        "mysql_ssl",
        Bool,
        Some("off"),
        "use SSL connections: on, off or a mode {DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY}",
        Mysql,
        All,
    ),
    o("mysql_ssl_ca", Str, None, "CA certificates (PEM) to verify the server with", Mysql, All),
    o("mysql_ssl_cert", Str, None, "client certificate (PEM)", Mysql, All),
    o("mysql_ssl_key", Str, None, "client certificate's private key (PEM)", Mysql, All),
    o("mysql_ssl_cipher", Str, Some(""), "use specific cipher for SSL connections", Mysql, All),
    o("mysql_compression", Bool, Some("off"), "use compression, if available in the client library", Mysql, All),
    o("mysql_debug", Bool, Some("off"), "trace all client library calls", Mysql, All),
    o("mysql_ignore_errors", List, Some("1213,1020,1205"), "list of errors to ignore, or \"all\"", Mysql, All),
    o(
        "mysql_dry_run",
        Bool,
        Some("off"),
        "Dry run, pretend that all MySQL client API calls are successful without executing them",
        Mysql,
        All,
    ),
    o(
        "auto_inc",
        Bool,
        Some("on"),
        "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs",
        Script,
        Oltp,
    ),
    o("create_secondary", Bool, Some("on"), "Create a secondary index in addition to the PRIMARY KEY", Script, Oltp),
    o("create_table_options", Str, None, "Extra CREATE TABLE options", Script, Oltp),
    o("delete_inserts", Num, Some("1"), "Number of DELETE/INSERT combinations per transaction", Script, Oltp),
    o("distinct_ranges", Num, Some("1"), "Number of SELECT DISTINCT queries per transaction", Script, Oltp),
    o("index_updates", Num, Some("1"), "Number of UPDATE index queries per transaction", Script, Oltp),
    o("mysql_storage_engine", Str, Some("innodb"), "Storage engine, if MySQL is used", Script, Oltp),
    o("non_index_updates", Num, Some("1"), "Number of UPDATE non-index queries per transaction", Script, Oltp),
    o("order_ranges", Num, Some("1"), "Number of SELECT ORDER BY queries per transaction", Script, Oltp),
    o(
        "pgsql_variant",
        Str,
        None,
        "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0",
        Script,
        Oltp,
    ),
    o("point_selects", Num, Some("10"), "Number of point SELECT queries per transaction", Script, Oltp),
    o("range_selects", Bool, Some("on"), "Enable/disable all range SELECT queries", Script, Oltp),
    o("range_size", Num, Some("100"), "Range size for range SELECT queries", Script, Oltp),
    o("reconnect", Num, Some("0"), "Reconnect after every N events. The default (0) is to not reconnect", Script, Oltp),
    o("secondary", Bool, Some("off"), "Use a secondary index in place of the PRIMARY KEY", Script, Oltp),
    o("simple_ranges", Num, Some("1"), "Number of simple range SELECT queries per transaction", Script, Oltp),
    o(
        "skip_trx",
        Bool,
        Some("off"),
        "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode",
        Script,
        Oltp,
    ),
    o("sum_ranges", Num, Some("1"), "Number of SELECT SUM() queries per transaction", Script, Oltp),
    o("table_size", Num, Some("10000"), "Number of rows per table", Script, Oltp),
    o("tables", Num, Some("1"), "Number of tables", Script, Oltp),
    o(
        "random_points",
        Num,
        Some("10"),
        "Number of random points in the IN() clause in generated SELECTs",
        Script,
        RandomPoints,
    ),
    o("number_of_ranges", Num, Some("10"), "Number of random BETWEEN ranges per SELECT", Script, RandomRanges),
    o("delta", Num, Some("5"), "Size of BETWEEN ranges", Script, RandomRanges),
    o("format", Str, Some("text"), "report format {text, json}", Versus, All),
    o(
        "client_threads",
        Int,
        Some("0"),
        "OS threads running the connections as event loops (lean client only); 0 = one thread per connection, as sysbench",
        Versus,
        All,
    ),
    o(
        "clients",
        Int,
        Some("1"),
        "client processes that share the load: --threads, --rate and --events are split among them, they start measuring together, and their latency histograms are merged exactly",
        Versus,
        All,
    ),
    o(
        "clients_on",
        Str,
        Some("local"),
        "where the --clients run {local: processes on this host; slurm: the tasks of one srun job step, versus at the same path on every node}",
        Versus,
        All,
    ),
    o(
        "latency_log",
        Str,
        Some(""),
        "write every measured event's latency in microseconds, one per line, to this new file at the end of the run (with --clients, each client writes FILE.N)",
        Versus,
        All,
    ),
    o(
        "client_priority",
        Str,
        Some("normal"),
        "scheduling of the event-loop threads {normal; realtime: SCHED_FIFO priority 1, needs CAP_SYS_NICE}",
        Versus,
        All,
    ),
    o(
        "client_affinity",
        Str,
        Some("follow"),
        "where the worker threads run {follow: with the server on this host (loopback TCP, a unix socket) each one moves to its server thread's CPU; off: where the scheduler puts them, as sysbench}",
        Versus,
        All,
    ),
    o(
        "client",
        Str,
        Some("auto"),
        "MySQL protocol client {auto: versus's lean client, with the mysql crate for TLS, compression and other auth plugins; lean; crate}",
        Versus,
        All,
    ),
    o(
        "profile",
        Bool,
        Some("off"),
        "sample the server's on-CPU stacks during the measured time and print its CPU µs per transaction per function after the report (a server on this host; needs perf)",
        Versus,
        All,
    ),
    o("profile_hz", Int, Some("199"), "samples per second of --profile (1 to 10000)", Versus, All),
    o(
        "profile_waits",
        Bool,
        Some("off"),
        "with --profile: also where the server's threads waited off the CPU (every context switch with its stack; root)",
        Versus,
        All,
    ),
    o(
        "prepare_method",
        Str,
        Some("auto"),
        "how prepare loads rows {auto: LOAD DATA LOCAL INFILE when the server allows it, else INSERT; insert: sysbench's multi-row INSERTs; load}",
        Versus,
        All,
    ),
];

/// The spec of `name` (underscore spelling).
pub fn find(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

/// The known option closest to `name` (underscore spelling), if any is close enough to suggest.
pub fn closest(name: &str) -> Option<&'static str> {
    SPECS
        .iter()
        .map(|s| (levenshtein(name, s.name), s.name))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .min()
        .map(|(_, n)| n)
}

/// Edit distance between two strings (insertions, deletions, substitutions).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The `[=on|off]`, `=N`… format column of help.
pub fn format_of(kind: Kind) -> &'static str {
    match kind {
        Bool => "[=on|off]",
        Int | Num => "=N",
        Str => "=STRING",
        List => "=[LIST,...]",
        Size => "=SIZE",
    }
}

/// Help lines for `specs` in sysbench's layout: name and format padded to the longest plus one.
pub fn help_lines(specs: &[&Spec], dashed: bool) -> String {
    let width = specs.iter().map(|s| s.name.len() + format_of(s.kind).len()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for s in specs {
        let name = if dashed { s.name.replace('_', "-") } else { s.name.to_string() };
        let head = format!("{name}{}", format_of(s.kind));
        out.push_str(&format!("  --{head:<width$}{}", s.help));
        if let Some(d) = s.default {
            out.push_str(&format!(" [{d}]"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_canonical() {
        for (i, s) in SPECS.iter().enumerate() {
            assert!(!s.name.contains('-'), "{}", s.name);
            assert!(SPECS[i + 1..].iter().all(|t| t.name != s.name), "duplicate {}", s.name);
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("thread"), Some("threads"));
        assert_eq!(closest("table_sise"), Some("table_size"));
        assert_eq!(closest("mysql_pasword"), Some("mysql_password"));
        assert_eq!(closest("zzzzzzzzzzzzzzz"), None);
    }

    #[test]
    fn help_layout_matches_sysbench() {
        let a = find("auto_inc").unwrap();
        let t = find("tables").unwrap();
        let cs = find("create_secondary").unwrap();
        let e = find("mysql_storage_engine").unwrap();
        let text = help_lines(&[a, cs, e, t], false);
        let first = text.lines().next().unwrap();
        assert!(first.starts_with("  --auto_inc[=on|off]           Use AUTO_INCREMENT"), "{first}");
        assert!(text.lines().nth(3).unwrap().starts_with("  --tables=N                    Number of tables [1]"));
    }
}
