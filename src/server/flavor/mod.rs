//! Per-flavor knowledge: how each server family and version is initialised, which options it needs to
//! run sandboxed, and how benchmark users are created. One file per flavor.

pub mod defaults;
pub mod features;
mod mariadb;
mod mysql;
pub mod options;
pub mod replication;

use std::path::{Path, PathBuf};

use crate::server::build::{Build, Flavor, Version};
pub use features::{Family, Feature, flavor_named_in};

/// The files of one sandbox instance that the flavor code needs to know about.
#[derive(Debug, Clone)]
pub struct InstancePaths {
    /// The generated option file (`--defaults-file`).
    pub cnf: PathBuf,
    /// The datadir.
    pub datadir: PathBuf,
    /// The unix socket.
    pub socket: PathBuf,
    /// The pid file the server writes.
    pub pid_file: PathBuf,
    /// The error log.
    pub error_log: PathBuf,
    /// `tmpdir` of the server.
    pub tmpdir: PathBuf,
    /// `secure_file_priv`: the only directory the server reads and writes files in for SQL.
    pub files_dir: PathBuf,
    /// `init_file`: the accounts' set-up, run before the server accepts connections (0600).
    pub init_file: PathBuf,
}

/// A program and its arguments, kept as data so that command lines can be unit-tested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments in order.
    pub args: Vec<String>,
}

impl CommandLine {
    /// Builds a [`std::process::Command`] for this command line.
    pub fn to_command(&self) -> std::process::Command {
        let mut c = std::process::Command::new(&self.program);
        c.args(&self.args);
        c
    }

    /// The command line as one shell-like string, for messages.
    pub fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The options (name, value) that the flavor requires in `[mysqld]` for an isolated sandbox on loopback.
/// `run_as` is the OS account the server switches to (`user=`), when versus runs as root.
///
/// They come after the user's base config (and so win over it) and before `--set` overrides, which may
/// not name them (see [`crate::server::managed`]).
pub fn sandbox_options(
    build: &Build,
    paths: &InstancePaths,
    port: u16,
    run_as: Option<&str>,
) -> Vec<(String, Option<String>)> {
    let p = |p: &Path| Some(p.display().to_string());
    let l = &build.layout;
    let mut o: Vec<(String, Option<String>)> = vec![
        ("basedir".into(), p(&l.basedir)),
        ("datadir".into(), p(&paths.datadir)),
        ("plugin-dir".into(), p(&l.plugin_dir)),
        ("lc-messages-dir".into(), p(&l.messages_dir)),
        ("tmpdir".into(), p(&paths.tmpdir)),
        ("bind-address".into(), Some("127.0.0.1".into())),
        ("port".into(), Some(port.to_string())),
        ("socket".into(), p(&paths.socket)),
        ("pid-file".into(), p(&paths.pid_file)),
        ("log-error".into(), p(&paths.error_log)),
        ("secure-file-priv".into(), p(&paths.files_dir)),
        // Accounts at 'localhost' (root) are then reachable over the socket only, not over TCP.
        ("skip-name-resolve".into(), None),
    ];
    if let Some(user) = run_as {
        o.push(("user".into(), Some(user.into())));
    }
    match build.flavor {
        Flavor::Mariadb => o.extend(mariadb::required_options(build.version)),
        Flavor::Mysql | Flavor::Percona => o.extend(mysql::required_options(build.version, paths)),
    }
    o
}

/// The command that creates a fresh datadir for `build`, reading the sandbox's option file.
pub fn init_command(build: &Build, paths: &InstancePaths, run_as: Option<&str>) -> CommandLine {
    match build.flavor {
        Flavor::Mariadb => mariadb::init_command(build, paths, run_as),
        Flavor::Mysql | Flavor::Percona => mysql::init_command(build, paths, run_as),
    }
}

/// The install script's command line (`mariadb-install-db`, MySQL 5.5/5.6's `mysql_install_db`): the
/// script finds my_print_defaults, resolveip and share/*.sql through `--basedir`. The flavor adds its own
/// options after these.
fn install_script_command(build: &Build, paths: &InstancePaths, run_as: Option<&str>) -> CommandLine {
    let script =
        build.layout.install_db.clone().unwrap_or_else(|| build.layout.basedir.join("scripts/mysql_install_db"));
    let mut args = vec![
        format!("--defaults-file={}", paths.cnf.display()),
        format!("--basedir={}", build.layout.basedir.display()),
        format!("--datadir={}", paths.datadir.display()),
    ];
    if let Some(user) = run_as {
        args.push(format!("--user={user}"));
    }
    CommandLine { program: script, args }
}

/// True when the datadir is created by an install script (`mariadb-install-db`, MySQL 5.5/5.6's
/// `mysql_install_db`) rather than by the server itself (`mysqld --initialize-insecure`, MySQL 5.7.6+).
pub fn uses_install_script(flavor: Flavor, version: Version) -> bool {
    match flavor {
        Flavor::Mariadb => true,
        Flavor::Mysql | Flavor::Percona => mysql::uses_install_script(version),
    }
}

/// The command that starts the server; everything else is in the option file.
pub fn start_command(build: &Build, paths: &InstancePaths) -> CommandLine {
    CommandLine { program: build.layout.server.clone(), args: vec![format!("--defaults-file={}", paths.cnf.display())] }
}

/// What the benchmark account may do, on its databases only: everything the workloads run (sysbench's
/// prepare, run and cleanup; the Insert Benchmark's load, index, write and query steps; the foreign keys
/// of TPC-C-like Lua scripts, which MySQL checks against REFERENCES), nothing that
/// reaches files, other accounts or the server's settings (no FILE, SUPER, GRANT OPTION, global grants).
pub const BENCHMARK_PRIVILEGES: &str = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES";

/// The databases the benchmark account works in besides its own: the Insert Benchmark's.
pub const EXTRA_DATABASES: &[&str] = &["ib"];

/// The accounts of a sandbox.
#[derive(Debug, Clone)]
pub struct Accounts<'a> {
    /// root's password (root exists at 'localhost' only: the socket).
    pub root_password: &'a str,
    /// The benchmark account.
    pub user: &'a str,
    /// Its password.
    pub password: &'a str,
    /// Its database (created).
    pub database: &'a str,
}

/// The init file of a sandbox, one statement a line, run by the server at every start before it accepts
/// connections: root gets the sandbox's password and no other host; anonymous accounts go; the benchmark
/// account exists at '%' and 'localhost' with its password and [`BENCHMARK_PRIVILEGES`] on its databases
/// only (whatever a restored datadir granted it before); its database exists.
pub fn bootstrap_sql(flavor: Flavor, version: Version, a: &Accounts) -> Vec<String> {
    let identified = |password: &str| match flavor {
        Flavor::Mariadb => mariadb::identified_by(version, &quote_string(password)),
        Flavor::Mysql | Flavor::Percona => mysql::identified_by(version, &quote_string(password)),
    };
    // MySQL before 5.7.6 has no IF [NOT] EXISTS and no ALTER USER … IDENTIFIED: the older forms do the same.
    let modern = match flavor {
        Flavor::Mariadb => true,
        Flavor::Mysql | Flavor::Percona => mysql::has_account_if_clauses(version),
    };
    let mut sql = Vec::new();
    if modern {
        sql.push(format!("ALTER USER 'root'@'localhost' {}", identified(a.root_password)));
        // Every other root and every anonymous account, whatever host it names: the install scripts
        // create `root@<hostname>` (with an empty password on MariaDB), and a datadir restored from a
        // snapshot may carry another machine's.
        sql.extend(DROP_OTHER_ROOTS.iter().map(|s| s.to_string()));
    } else {
        sql.push(format!("SET PASSWORD FOR 'root'@'localhost' = PASSWORD({})", quote_string(a.root_password)));
        sql.push("DELETE FROM mysql.user WHERE user = '' OR (user = 'root' AND host <> 'localhost')".into());
        sql.push("FLUSH PRIVILEGES".into());
    }
    let user = quote_string(a.user);
    let ident = identified(a.password);
    let databases: Vec<String> =
        std::iter::once(a.database).chain(EXTRA_DATABASES.iter().copied()).map(quote_ident).collect();
    for host in ["%", "localhost"] {
        if modern {
            sql.push(format!("CREATE USER IF NOT EXISTS {user}@'{host}' {ident}"));
            sql.push(format!("ALTER USER {user}@'{host}' {ident}"));
        } else {
            // GRANT creates a missing account and sets the password of an existing one (before 8.0).
            sql.push(format!("GRANT USAGE ON *.* TO {user}@'{host}' {ident}"));
        }
        sql.push(format!("REVOKE ALL PRIVILEGES, GRANT OPTION FROM {user}@'{host}'"));
        for db in &databases {
            sql.push(format!("GRANT {BENCHMARK_PRIVILEGES} ON {db}.* TO {user}@'{host}'"));
        }
    }
    sql.push(format!("CREATE DATABASE IF NOT EXISTS {}", quote_ident(a.database)));
    sql
}

/// Drops every account named root at a host other than 'localhost', and every anonymous account
/// (init-file statements, one a line: the list is built from `mysql.user` at each start).
const DROP_OTHER_ROOTS: &[&str] = &[
    "SET @versus_drop = (SELECT GROUP_CONCAT(CONCAT(QUOTE(user), '@', QUOTE(host)) SEPARATOR ', ') FROM mysql.user \
     WHERE user = '' OR (user = 'root' AND host <> 'localhost'))",
    "SET @versus_drop = IF(@versus_drop IS NULL, 'DO 0', CONCAT('DROP USER ', @versus_drop))",
    "PREPARE versus_drop FROM @versus_drop",
    "EXECUTE versus_drop",
    "DEALLOCATE PREPARE versus_drop",
];

/// A SQL identifier in backquotes.
fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// The authentication plugin a new user gets by default on this server.
pub fn default_auth_plugin(flavor: Flavor, version: Version) -> &'static str {
    match flavor {
        Flavor::Mariadb => "mysql_native_password",
        Flavor::Mysql | Flavor::Percona => mysql::default_auth_plugin(version),
    }
}

/// A SQL string literal with quotes and backslashes escaped, and the characters that would end a line
/// of the init file (one statement a line) or the statement (NUL, Ctrl-Z) as their backslash escapes.
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\x1a' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::server::build::{Layout, Source};

    pub fn build(flavor: Flavor, version: Version, tarball: bool) -> Build {
        let root = PathBuf::from("/opt/srv");
        let basedir = if tarball { root.clone() } else { root.join("usr") };
        let server = match (flavor, tarball) {
            (Flavor::Mariadb, false) => basedir.join("sbin/mariadbd"),
            (Flavor::Mariadb, true) => basedir.join("bin/mariadbd"),
            (_, false) => basedir.join("sbin/mysqld"),
            (_, true) => basedir.join("bin/mysqld"),
        };
        let install_db = match (flavor, tarball) {
            (Flavor::Mariadb, false) => Some(basedir.join("bin/mariadb-install-db")),
            (Flavor::Mariadb, true) => Some(basedir.join("scripts/mariadb-install-db")),
            _ => None,
        };
        Build {
            name: format!("{flavor}-{version}"),
            flavor,
            version,
            version_string: version.to_string(),
            root: root.clone(),
            layout: Layout {
                server,
                install_db,
                client: None,
                admin: None,
                plugin_dir: basedir.join("lib/plugin"),
                messages_dir: basedir.join("share"),
                basedir,
            },
            source: Source::Path,
            size_bytes: 0,
        }
    }

    pub fn paths() -> InstancePaths {
        let d = PathBuf::from("/sb/x");
        InstancePaths {
            cnf: d.join("my.cnf"),
            datadir: d.join("data"),
            socket: d.join("mysqld.sock"),
            pid_file: d.join("mysqld.pid"),
            error_log: d.join("error.log"),
            tmpdir: d.join("tmp"),
            files_dir: d.join("files"),
            init_file: d.join("init.sql"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    fn names(o: &[(String, Option<String>)]) -> Vec<&str> {
        o.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn sandbox_options_bind_loopback_and_name_every_path() {
        let b = build(Flavor::Mariadb, Version::new(10, 11, 19), false);
        let o = sandbox_options(&b, &paths(), 3400, Some("mysql"));
        let get = |k: &str| o.iter().find(|(n, _)| n == k).and_then(|(_, v)| v.clone());
        assert_eq!(get("bind-address").as_deref(), Some("127.0.0.1"));
        assert_eq!(get("port").as_deref(), Some("3400"));
        assert_eq!(get("user").as_deref(), Some("mysql"));
        assert_eq!(get("plugin-dir").as_deref(), Some("/opt/srv/usr/lib/plugin"));
        assert_eq!(get("secure-file-priv").as_deref(), Some("/sb/x/files"));
        assert!(names(&o).contains(&"skip-name-resolve"));
        assert!(!names(&sandbox_options(&b, &paths(), 3400, None)).contains(&"user"));
    }

    #[test]
    fn mysql_sandboxes_turn_off_x_plugin_from_8_0_and_set_secure_file_priv() {
        for (v, mysqlx) in
            [(Version::new(5, 7, 44), false), (Version::new(8, 0, 36), true), (Version::new(9, 7, 4), true)]
        {
            let o = sandbox_options(&build(Flavor::Mysql, v, true), &paths(), 3401, Some("root"));
            assert_eq!(names(&o).contains(&"mysqlx"), mysqlx, "{v}");
            assert!(o.contains(&("secure-file-priv".into(), Some("/sb/x/files".into()))), "{v}");
        }
        let o = sandbox_options(&build(Flavor::Mariadb, Version::new(11, 8, 9), false), &paths(), 3401, None);
        assert!(!names(&o).contains(&"mysqlx"));
    }

    #[test]
    fn bootstrap_sql_locks_root_to_the_socket_and_grants_the_benchmark_account_its_databases_only() {
        let a = Accounts { root_password: "R00t", user: "sbtest", password: "pa'ss", database: "sbtest" };
        let sql = bootstrap_sql(Flavor::Mysql, Version::new(9, 7, 4), &a);
        assert_eq!(sql[0], "ALTER USER 'root'@'localhost' IDENTIFIED WITH caching_sha2_password BY 'R00t'");
        assert!(sql.iter().any(|s| s.contains("user = '' OR (user = 'root' AND host <> 'localhost')")));
        assert!(sql.contains(&"EXECUTE versus_drop".to_string()));
        let grants: Vec<&String> = sql.iter().filter(|s| s.starts_with("GRANT")).collect();
        assert_eq!(
            grants,
            [
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES ON `sbtest`.* TO 'sbtest'@'%'",
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES ON `ib`.* TO 'sbtest'@'%'",
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES ON `sbtest`.* TO 'sbtest'@'localhost'",
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES ON `ib`.* TO 'sbtest'@'localhost'",
            ]
        );
        assert!(sql.iter().all(|s| !s.contains("*.*") && !s.contains("WITH GRANT OPTION") && !s.contains('\n')));
        assert!(sql.contains(&"REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'sbtest'@'%'".to_string()));
        assert!(sql.contains(
            &"CREATE USER IF NOT EXISTS 'sbtest'@'%' IDENTIFIED WITH caching_sha2_password BY 'pa''ss'".to_string()
        ));
        assert_eq!(sql.last().unwrap(), "CREATE DATABASE IF NOT EXISTS `sbtest`");
        let sql = bootstrap_sql(Flavor::Mariadb, Version::new(10, 11, 19), &a);
        assert_eq!(sql[0], "ALTER USER 'root'@'localhost' IDENTIFIED BY 'R00t'");
        let sql = bootstrap_sql(Flavor::Mysql, Version::new(5, 7, 44), &a);
        assert!(sql[0].ends_with("IDENTIFIED WITH mysql_native_password BY 'R00t'"), "{}", sql[0]);
        let sql = bootstrap_sql(Flavor::Mysql, Version::new(5, 6, 51), &a);
        assert_eq!(sql[0], "SET PASSWORD FOR 'root'@'localhost' = PASSWORD('R00t')");
        assert!(sql.contains(&"GRANT USAGE ON *.* TO 'sbtest'@'%' IDENTIFIED BY 'pa''ss'".to_string()));
        assert!(sql.iter().all(|s| !s.contains(" IF EXISTS") && !s.contains("IF NOT EXISTS '")));
    }

    #[test]
    fn default_auth_plugins() {
        assert_eq!(default_auth_plugin(Flavor::Mysql, Version::new(5, 7, 44)), "mysql_native_password");
        assert_eq!(default_auth_plugin(Flavor::Mysql, Version::new(8, 0, 36)), "caching_sha2_password");
        assert_eq!(default_auth_plugin(Flavor::Percona, Version::new(8, 4, 0)), "caching_sha2_password");
        assert_eq!(default_auth_plugin(Flavor::Mariadb, Version::new(11, 8, 9)), "mysql_native_password");
    }
}
