//! Options versus manages in a sandbox, matched the way the server matches option names.
//!
//! The server reads `-` and `_` alike, ignores `loose-`, takes `skip-`, `disable-` and `enable-` as
//! forms of a boolean, `maximum-` as the limit of a variable, and (MariaDB, MySQL before 8.0) any unique
//! prefix of a name as the name itself: `bind-addr=0.0.0.0` is `bind-address=0.0.0.0`. So a name is
//! refused when, with those forms taken off, it is a managed name or any prefix of one (a prefix the
//! server finds ambiguous fails there anyway, so refusing it loses nothing).
//!
//! Two kinds: options the sandbox sets itself ([`Kind::Sandbox`]: in a `--config` file they are
//! overridden by the sandbox's own values, which come later; in `--set` they are refused), and options
//! that would open the sandbox to others whatever comes later ([`Kind::Never`]: refused everywhere).

use std::path::Path;

use crate::error::{Error, Result};
use crate::server::mycnf::{DirectiveKind, Line, MyCnf};

/// How versus treats a managed option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The sandbox sets it; the text says how the user changes it instead.
    Sandbox(&'static str),
    /// Never allowed in a sandbox; the text says why.
    Never(&'static str),
}

/// The managed options, in the server's spelling with dashes.
pub const MANAGED: &[(&str, Kind)] = &[
    ("port", Kind::Sandbox("versus gives each sandbox a free port (`versus server start --port N` picks one)")),
    ("bind-address", Kind::Sandbox("sandboxes listen on 127.0.0.1 only")),
    ("socket", Kind::Sandbox("the socket lives in the sandbox directory")),
    ("datadir", Kind::Sandbox("it lives in the sandbox directory (`versus server start --datadir DIR` picks another)")),
    ("basedir", Kind::Sandbox("it comes from the build")),
    ("plugin-dir", Kind::Sandbox("it comes from the build")),
    ("lc-messages-dir", Kind::Sandbox("it comes from the build")),
    ("tmpdir", Kind::Sandbox("it lives in the sandbox directory")),
    ("pid-file", Kind::Sandbox("it lives in the sandbox directory")),
    ("log-error", Kind::Sandbox("it lives in the sandbox directory")),
    ("secure-file-priv", Kind::Sandbox("server-side file access is confined to files/ in the sandbox")),
    ("user", Kind::Sandbox("versus chooses the OS account the server runs as")),
    ("init-file", Kind::Sandbox("versus uses it to set up the sandbox's accounts")),
    ("mysqlx", Kind::Sandbox("the X protocol is off in sandboxes")),
    (
        "name-resolve",
        Kind::Sandbox("sandboxes skip name resolution, so root@localhost is reachable over the socket only"),
    ),
    ("mysqlx-bind-address", Kind::Never("the X protocol would listen beyond 127.0.0.1")),
    ("mysqlx-port", Kind::Never("the X protocol is off in sandboxes")),
    ("mysqlx-socket", Kind::Never("the X protocol is off in sandboxes")),
    ("admin-address", Kind::Never("an administrative interface would listen beyond the sandbox")),
    ("admin-port", Kind::Never("an administrative interface would listen beyond the sandbox")),
    ("extra-port", Kind::Never("a second port would listen beyond the sandbox")),
    ("grant-tables", Kind::Never("a sandbox always checks privileges (skip-grant-tables would open it to everyone)")),
    ("named-pipe", Kind::Never("sandboxes are reached over 127.0.0.1 and their socket only")),
    ("shared-memory", Kind::Never("sandboxes are reached over 127.0.0.1 and their socket only")),
];

/// Forms the server accepts in front of an option name.
const PREFIXES: &[&str] = &["loose-", "maximum-", "skip-", "disable-", "enable-"];

/// The bare option name the server would read `name` as: lower case, `_` as `-`, the `loose-`,
/// `maximum-`, `skip-`, `disable-` and `enable-` forms taken off (in any order and number).
pub fn bare_name(name: &str) -> String {
    let mut n = name.trim().to_ascii_lowercase().replace('_', "-");
    while let Some(rest) = PREFIXES.iter().find_map(|p| n.strip_prefix(p)).filter(|r| !r.is_empty()) {
        n = rest.to_string();
    }
    n
}

/// The managed option `name` reaches in any spelling, if any: an exact match first, then the first
/// managed option it is a prefix of.
pub fn lookup(name: &str) -> Option<(&'static str, Kind)> {
    let bare = bare_name(name);
    if bare.is_empty() {
        return None;
    }
    MANAGED.iter().find(|(m, _)| *m == bare).or_else(|| MANAGED.iter().find(|(m, _)| m.starts_with(&bare))).copied()
}

/// Refuses an option set with `flag` (`--set`, a `set` table, an explain target) that reaches a managed
/// option; the message names the spelling, the option it reaches and what to do instead.
pub fn check_override(flag: &str, name: &str) -> Result<()> {
    match lookup(name) {
        None => Ok(()),
        Some((m, Kind::Sandbox(how) | Kind::Never(how))) => Err(Error::option(flag, refusal(name, m, how))),
    }
}

fn refusal(name: &str, managed: &str, how: &str) -> String {
    if name == managed {
        format!("'{name}' is managed by versus: {how}")
    } else {
        format!("'{name}' is read by the server as '{managed}', which is managed by versus: {how}")
    }
}

/// Refuses a `--config` file (and the files it includes) that sets an option no sandbox may have. The
/// options the sandbox sets itself may appear: the sandbox's values come later and win.
pub fn check_config_file(path: &Path) -> Result<()> {
    check_file(path, 0)
}

fn check_file(path: &Path, depth: usize) -> Result<()> {
    // The server stops following directives this deep.
    if depth > 10 {
        return Ok(());
    }
    let cnf = MyCnf::read(path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let lines = cnf.preamble().iter().chain(cnf.sections().iter().flat_map(|s| s.lines()));
    for line in lines {
        match line {
            Line::Entry(e) => {
                if let Some((m, Kind::Never(why))) = lookup(e.key()) {
                    let at = e.line().map(|l| format!("line {l}: ")).unwrap_or_default();
                    return Err(Error::file(path, format!("{at}{}; remove it", refusal(e.key(), m, why))));
                }
            }
            Line::Directive(d) => {
                let target = dir.join(d.path());
                match d.kind() {
                    DirectiveKind::Include if target.is_file() => check_file(&target, depth + 1)?,
                    DirectiveKind::IncludeDir => {
                        for entry in std::fs::read_dir(&target).into_iter().flatten().flatten() {
                            let p = entry.path();
                            if p.extension().is_some_and(|x| x == "cnf") && p.is_file() {
                                check_file(&p, depth + 1)?;
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_managed_option_is_refused() {
        for name in [
            "bind-address",
            "bind_address",
            "bind-addr",
            "bind",
            "BIND-ADDRESS",
            "loose-bind-address",
            "loose_bind_addr",
            "datad",
            "skip-grant-tables",
            "loose-skip-grant",
            "skip-name-resolve",
            "skip_name_resolve",
            "disable-skip-name-resolve",
            "loose-skip-name-resolve",
            "disable-grant-tables",
            "maximum-port",
            "mysqlx-bind",
            "admin-addr",
            "secure_file_priv",
            "soc",
        ] {
            assert!(lookup(name).is_some(), "{name}");
            assert!(check_override("--set", name).unwrap_err().to_string().contains("managed by versus"), "{name}");
        }
        let e = check_override("--set", "bind-addr").unwrap_err().to_string();
        assert_eq!(
            e,
            "--set: 'bind-addr' is read by the server as 'bind-address', which is managed by versus: sandboxes listen \
             on 127.0.0.1 only"
        );
    }

    #[test]
    fn ordinary_options_pass() {
        for name in [
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "log-bin",
            "skip-log-bin",
            "port-open-timeout",
            "innodb_buffer_pool_size",
            "max_connections",
            "loose-innodb-log-writer-threads",
            "shared-memory-base-name",
        ] {
            assert!(lookup(name).is_none(), "{name}");
        }
    }

    #[test]
    fn config_files_may_set_what_the_sandbox_overrides_but_never_what_opens_it() {
        let t = tempfile::tempdir().unwrap();
        let ok = t.path().join("ok.cnf");
        std::fs::write(&ok, "[mysqld]\nport=3306\nbind-address=0.0.0.0\ndatadir=/var/lib/mysql\n").unwrap();
        check_config_file(&ok).unwrap();
        let inc = t.path().join("conf.d");
        std::fs::create_dir(&inc).unwrap();
        std::fs::write(inc.join("x.cnf"), "[mysqld]\nloose_skip_grant_tables\n").unwrap();
        let bad = t.path().join("bad.cnf");
        std::fs::write(&bad, "[mysqld]\nport=3306\n!includedir conf.d\n").unwrap();
        let e = check_config_file(&bad).unwrap_err().to_string();
        assert!(e.contains("x.cnf: line 2: 'loose_skip_grant_tables' is read by the server as 'grant-tables'"), "{e}");
        std::fs::write(inc.join("x.cnf"), "[mysqld-11.8]\nskip-grant\n").unwrap();
        let e = check_config_file(&bad).unwrap_err().to_string();
        assert!(e.contains("'skip-grant' is read by the server as 'grant-tables'"), "{e}");
    }
}
