//! Legacy command lines: sysbench 0.4 (`--test=oltp --oltp-test-mode=…`) and 0.5 (`--test=…/oltp.lua
//! --oltp-tables-count …`) translated to the 1.0 equivalents (reference sysbench.md §9), with one line
//! saying what they were mapped to. What has no 1.0 equivalent is an error naming the option.

use crate::error::{Error, Result};

/// A translated command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    /// The 1.0 arguments (test first, command last).
    pub args: Vec<String>,
    /// The one line telling the user what the command line was mapped to.
    pub note: String,
}

/// Options that exist only in 0.4/0.5 (underscore spelling); any of them, `--test=` or an `--oltp-*`
/// option makes a command line legacy.
const LEGACY_ONLY: &[&str] = &[
    "test",
    "init_rng",
    "seed_rng",
    "rand_init",
    "mysql_table_engine",
    "mysql_engine_trx",
    "batch",
    "batch_delay",
    "myisam_max_rows",
    "mysql_create_options",
    "tx_jitter",
];

/// `--oltp-X` options whose 1.0 name is `--X`.
const SAME_NAME: &[&str] = &[
    "table_size",
    "tables_count",
    "range_size",
    "point_selects",
    "simple_ranges",
    "sum_ranges",
    "order_ranges",
    "distinct_ranges",
    "index_updates",
    "non_index_updates",
    "delete_inserts",
    "range_selects",
    "auto_inc",
    "skip_trx",
    "secondary",
    "create_secondary",
];

fn split(arg: &str) -> Option<(String, Option<String>)> {
    let body = arg.strip_prefix("--")?;
    Some(match body.split_once('=') {
        Some((n, v)) => (n.replace('-', "_"), Some(v.to_string())),
        None => (body.replace('-', "_"), None),
    })
}

fn is_on(v: &Option<String>) -> Result<bool> {
    match v.as_deref().unwrap_or("on").to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        other => Err(Error::Other(format!("invalid boolean value '{other}'"))),
    }
}

fn opt_err(name: &str, msg: impl Into<String>) -> Error {
    Error::option(format!("--{}", name.replace('_', "-")), msg)
}

/// Which 1.0 test a legacy script path means.
fn test_of_script(path: &str) -> Result<&'static str> {
    let base = path.rsplit('/').next().unwrap_or(path);
    let base = base.strip_suffix(".lua").unwrap_or(base);
    Ok(match base {
        "oltp" | "parallel_prepare" => "oltp_read_write",
        "select" | "oltp_simple" => "oltp_point_select",
        "insert" => "oltp_insert",
        "delete" => "oltp_delete",
        "update_index" => "oltp_update_index",
        "update_non_index" => "oltp_update_non_index",
        "bulk_insert" => "bulk_insert",
        "select_random_points" => "select_random_points",
        "select_random_ranges" => "select_random_ranges",
        other => {
            if let Some((n, _)) = super::options::Test::ALL.iter().find(|(n, _)| *n == other) {
                return Ok(n);
            }
            return Err(opt_err(
                "test",
                format!("'{path}' has no versus equivalent; versus runs the sysbench OLTP tests only"),
            ));
        }
    })
}

/// Translates `args` if they are a legacy command line; `None` when they are already 1.0 style.
pub fn translate(args: &[String]) -> Result<Option<Translation>> {
    let legacy =
        args.iter().filter_map(|a| split(a)).any(|(n, _)| n.starts_with("oltp_") || LEGACY_ONLY.contains(&n.as_str()));
    if !legacy {
        return Ok(None);
    }
    let mut out: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let (mut test_arg, mut mode, mut nontrx) = (None::<String>, "complex".to_string(), "select".to_string());
    let (mut read_only, mut write_only, mut batch) = (false, false, false);
    let mut batch_delay: u64 = 300;
    // 0.4/0.5 style (`--test=`, `--num-threads`, `--max-time`, `--max-requests`): their run limits apply.
    let (mut old_style, mut events_given, mut time_given) = (false, false, false);
    let mut notes: Vec<String> = Vec::new();
    for a in args {
        let Some((name, value)) = split(a) else {
            words.push(a.clone());
            continue;
        };
        let v = value.clone().unwrap_or_default();
        let set = |out: &mut Vec<String>, n: &str, v: &str| out.push(format!("--{}={v}", n.replace('_', "-")));
        match name.as_str() {
            "test" => {
                old_style = true;
                test_arg = Some(v);
            }
            "oltp_test_mode" => mode = v,
            "oltp_nontrx_mode" => nontrx = v,
            "oltp_read_only" => read_only = is_on(&value)?,
            "oltp_write_only" => write_only = is_on(&value)?,
            "oltp_dist_type" => set(&mut out, "rand_type", &v),
            "oltp_dist_iter" => set(&mut out, "rand_spec_iter", &v),
            "oltp_dist_pct" => set(&mut out, "rand_spec_pct", &v),
            "oltp_dist_res" => set(&mut out, "rand_spec_res", &v),
            "oltp_tables_count" => set(&mut out, "tables", &v),
            "oltp_table_name" => match v.as_str() {
                "sbtest" | "sbtest1" => set(&mut out, "tables", "1"),
                _ => {
                    return Err(opt_err(&name, format!("table '{v}' cannot be mapped; versus uses tables sbtest1..N")));
                }
            },
            "oltp_connect_delay" | "oltp_reconnect" | "myisam_max_rows" | "init_rng" | "rand_init" | "tx_jitter" => {}
            "oltp_reconnect_mode" => match v.as_str() {
                "session" => {}
                "transaction" => set(&mut out, "reconnect", "1"),
                _ => return Err(opt_err(&name, format!("'{v}' cannot be mapped; 1.0 only reconnects every N events"))),
            },
            "oltp_user_delay_min" | "oltp_user_delay_max" if v == "0" => {}
            "oltp_user_delay_min" | "oltp_user_delay_max" | "oltp_sp_name" => {
                return Err(opt_err(&name, "has no sysbench 1.0 equivalent"));
            }
            "oltp_point_select_mysql_handler" | "oltp_point_select_all_cols" => {
                if is_on(&value)? {
                    return Err(opt_err(&name, "has no sysbench 1.0 equivalent"));
                }
            }
            "mysql_table_engine" => set(&mut out, "mysql_storage_engine", &v),
            "mysql_create_options" => set(&mut out, "create_table_options", &v),
            "mysql_engine_trx" => {
                if v == "no" {
                    return Err(opt_err(
                        &name,
                        "non-transactional engines (LOCK TABLES) are not supported; use a transactional engine",
                    ));
                }
            }
            "seed_rng" => set(&mut out, "rand_seed", &v),
            "batch" => batch = is_on(&value)?,
            "batch_delay" => batch_delay = v.parse().map_err(|_| opt_err(&name, format!("invalid value '{v}'")))?,
            "num_threads" => {
                old_style = true;
                set(&mut out, "threads", &v);
            }
            "max_time" => {
                (old_style, time_given) = (true, true);
                set(&mut out, "time", &v);
            }
            "max_requests" => {
                (old_style, events_given) = (true, true);
                set(&mut out, "events", &v);
            }
            "tx_rate" => set(&mut out, "rate", &v),
            n if n.starts_with("oltp_") && SAME_NAME.contains(&&n[5..]) => {
                let new = if &n[5..] == "tables_count" { "tables" } else { &n[5..] };
                match value {
                    Some(v) => set(&mut out, new, &v),
                    None => out.push(format!("--{}", new.replace('_', "-"))),
                }
            }
            n if n.starts_with("oltp_") => {
                return Err(opt_err(n, "unknown legacy option; it has no sysbench 1.0 equivalent"));
            }
            _ => {
                time_given |= name == "time";
                events_given |= name == "events";
                out.push(a.clone());
            }
        }
    }
    if read_only && write_only {
        return Err(opt_err("oltp_read_only", "cannot be combined with --oltp-write-only"));
    }
    // Words: a 0.4/0.5 line has only the command; a 1.0 test name may precede it.
    let command = words.pop();
    if let Some(w) = words.pop() {
        if test_arg.is_some() {
            return Err(Error::Other(format!("unrecognized command line argument: {w}")));
        }
        test_arg = Some(w);
    }
    let test_arg = test_arg.unwrap_or_else(|| "oltp".to_string());
    let test = if test_arg == "oltp" {
        match mode.as_str() {
            "complex" => "oltp_read_write",
            "simple" => "oltp_point_select",
            "nontrx" => match nontrx.as_str() {
                "select" => "oltp_point_select",
                "update_key" => "oltp_update_index",
                "update_nokey" => "oltp_update_non_index",
                "insert" => "oltp_insert",
                "delete" => "oltp_delete",
                other => return Err(opt_err("oltp_nontrx_mode", format!("unknown mode '{other}'"))),
            },
            "incupdate" => {
                notes.push("incupdate = UPDATE ... SET c=c+1, see docs/sysbench.md".into());
                "oltp_inc_update"
            }
            "sp" => return Err(opt_err("oltp_test_mode", "'sp' (stored procedures) has no sysbench 1.0 equivalent")),
            other => {
                return Err(opt_err(
                    "oltp_test_mode",
                    format!("unknown mode '{other}'; expected complex, simple, nontrx or incupdate"),
                ));
            }
        }
    } else {
        test_of_script(&test_arg)?
    };
    let test = match (test, read_only, write_only) {
        ("oltp_read_write", true, _) => "oltp_read_only",
        ("oltp_read_write", _, true) => "oltp_write_only",
        (t, _, _) => t,
    };
    if batch {
        out.push(format!("--report-interval={batch_delay}"));
    }
    let modern_name = super::options::Test::ALL.iter().any(|(n, _)| {
        let base = test_arg.rsplit('/').next().unwrap_or(&test_arg);
        base.strip_suffix(".lua").unwrap_or(base) == *n
    });
    if old_style && !modern_name {
        // 0.4 and 0.5 stopped after 10000 requests and had no time limit, unless told otherwise; a legacy
        // script run the 1.0 way gets 1.0's limits.
        if !events_given {
            out.push("--events=10000".to_string());
        }
        if !time_given {
            out.push("--time=0".to_string());
        }
    }
    let mut args = vec![test.to_string()];
    args.extend(out);
    args.extend(command);
    let shown: Vec<String> = args
        .iter()
        .map(|a| if a.starts_with("--mysql-password=") { "--mysql-password=***".into() } else { a.clone() })
        .collect();
    let mut note = format!("legacy command line mapped to: versus sysbench {}", shown.join(" "));
    for n in notes {
        note.push_str(&format!(" ({n})"));
    }
    Ok(Some(Translation { args, note }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Result<Option<Translation>> {
        translate(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn modern_lines_are_untouched() {
        assert_eq!(t("oltp_read_write --tables=2 --max-time=5 run").unwrap(), None);
    }

    #[test]
    fn oltp_04_complex_and_modes() {
        let x =
            t("--test=oltp --oltp-table-size=100 --num-threads=2 --max-time=5 --max-requests=0 run").unwrap().unwrap();
        assert_eq!(x.args, ["oltp_read_write", "--table-size=100", "--threads=2", "--time=5", "--events=0", "run"]);
        assert!(x.note.starts_with("legacy command line mapped to: versus sysbench oltp_read_write"));
        let x = t("--test=oltp --oltp-test-mode=nontrx --oltp-nontrx-mode=update_key run").unwrap().unwrap();
        assert_eq!(x.args[0], "oltp_update_index");
        assert!(x.args.contains(&"--events=10000".to_string()));
        let x = t("--test=oltp --oltp-test-mode=incupdate --oltp-skip-trx run").unwrap().unwrap();
        assert_eq!(x.args[0], "oltp_inc_update");
        assert!(x.note.contains("c=c+1"));
        let x = t("--test=oltp --oltp-read-only=on run").unwrap().unwrap();
        assert_eq!(x.args[0], "oltp_read_only");
    }

    #[test]
    fn lua_05_scripts() {
        let x = t("--test=/usr/share/doc/sysbench/tests/db/oltp.lua --oltp_tables_count=3 --oltp_index_updates=10 run")
            .unwrap()
            .unwrap();
        assert_eq!(
            x.args,
            ["oltp_read_write", "--tables=3", "--index-updates=10", "--events=10000", "--time=0", "run"]
        );
        let x = t("--test=tests/db/select.lua prepare").unwrap().unwrap();
        assert_eq!(x.args[0], "oltp_point_select");
        // A legacy script run the 1.0 way keeps 1.0's limits (10 s, no event cap) unless given.
        let x = t("/usr/share/sysbench/tests/include/oltp_legacy/select.lua --oltp-table-size=1000 --time=2 run")
            .unwrap()
            .unwrap();
        assert_eq!(x.args, ["oltp_point_select", "--table-size=1000", "--time=2", "run"]);
        let x = t("--test=oltp --num-threads=2 --time=5 run").unwrap().unwrap();
        assert_eq!(x.args, ["oltp_read_write", "--threads=2", "--time=5", "--events=10000", "run"]);
    }

    #[test]
    fn deprecated_test_option_with_a_1_0_name() {
        let x = t("--test=oltp_point_select --threads=2 run").unwrap().unwrap();
        assert_eq!(x.args, ["oltp_point_select", "--threads=2", "run"]);
    }

    #[test]
    fn unmappable_is_an_error() {
        let e = t("--test=oltp --oltp-test-mode=sp run").unwrap_err().to_string();
        assert!(e.contains("--oltp-test-mode") && e.contains("sp"), "{e}");
        let e = t("--test=fileio run").unwrap_err().to_string();
        assert!(e.contains("fileio"), "{e}");
        let e = t("--test=oltp --oltp-table-name=foo run").unwrap_err().to_string();
        assert!(e.contains("--oltp-table-name"), "{e}");
        let e = t("--test=oltp --oltp-frobnicate=1 run").unwrap_err().to_string();
        assert!(e.contains("--oltp-frobnicate"), "{e}");
    }
}
