//! Per-flavor knowledge: how each server family and version is initialised, which options it needs to
//! run sandboxed, and how benchmark users are created. One file per flavor.

pub mod defaults;
mod mariadb;
mod mysql;
pub mod options;

use std::path::{Path, PathBuf};

use crate::server::build::{Build, Flavor, Version};

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
    /// MySQL's `secure_file_priv` directory.
    pub files_dir: PathBuf,
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
///
/// They come after the user's base config and before `--set` overrides, so a user can still change them.
pub fn sandbox_options(
    build: &Build,
    paths: &InstancePaths,
    port: u16,
    as_root: bool,
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
    ];
    if as_root {
        o.push(("user".into(), Some("root".into())));
    }
    match build.flavor {
        Flavor::Mariadb => o.extend(mariadb::required_options(build.version)),
        Flavor::Mysql | Flavor::Percona => o.extend(mysql::required_options(build.version, paths)),
    }
    o
}

/// The command that creates a fresh datadir for `build`, reading the sandbox's option file.
pub fn init_command(build: &Build, paths: &InstancePaths, as_root: bool) -> CommandLine {
    match build.flavor {
        Flavor::Mariadb => mariadb::init_command(build, paths, as_root),
        Flavor::Mysql | Flavor::Percona => mysql::init_command(build, paths, as_root),
    }
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

/// SQL run as root after the first start: the benchmark user (over TCP and the socket) and its database.
pub fn bootstrap_sql(flavor: Flavor, version: Version, user: &str, password: &str, database: &str) -> Vec<String> {
    let user = quote_string(user);
    let password = quote_string(password);
    let mut sql = Vec::new();
    for host in ["%", "localhost"] {
        sql.push(match flavor {
            Flavor::Mariadb => mariadb::create_user(version, &user, host, &password),
            Flavor::Mysql | Flavor::Percona => mysql::create_user(version, &user, host, &password),
        });
        sql.push(format!("GRANT ALL PRIVILEGES ON *.* TO {user}@'{host}' WITH GRANT OPTION"));
    }
    sql.push(format!("CREATE DATABASE IF NOT EXISTS `{}`", database.replace('`', "``")));
    sql
}

/// The authentication plugin a new user gets by default on this server.
pub fn default_auth_plugin(flavor: Flavor, version: Version) -> &'static str {
    match flavor {
        Flavor::Mariadb => "mysql_native_password",
        Flavor::Mysql | Flavor::Percona => mysql::default_auth_plugin(version),
    }
}

/// A SQL string literal with quotes and backslashes escaped.
pub(crate) fn quote_string(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
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
        let o = sandbox_options(&b, &paths(), 3400, true);
        let get = |k: &str| o.iter().find(|(n, _)| n == k).and_then(|(_, v)| v.clone());
        assert_eq!(get("bind-address").as_deref(), Some("127.0.0.1"));
        assert_eq!(get("port").as_deref(), Some("3400"));
        assert_eq!(get("user").as_deref(), Some("root"));
        assert_eq!(get("plugin-dir").as_deref(), Some("/opt/srv/usr/lib/plugin"));
        assert!(!names(&sandbox_options(&b, &paths(), 3400, false)).contains(&"user"));
    }

    #[test]
    fn mysql_sandboxes_turn_off_x_plugin_from_8_0_and_set_secure_file_priv() {
        for (v, mysqlx) in
            [(Version::new(5, 7, 44), false), (Version::new(8, 0, 36), true), (Version::new(9, 7, 4), true)]
        {
            let o = sandbox_options(&build(Flavor::Mysql, v, true), &paths(), 3401, true);
            assert_eq!(names(&o).contains(&"mysqlx"), mysqlx, "{v}");
            assert!(o.contains(&("secure-file-priv".into(), Some("/sb/x/files".into()))), "{v}");
        }
        let o = sandbox_options(&build(Flavor::Mariadb, Version::new(11, 8, 9), false), &paths(), 3401, true);
        assert!(!names(&o).contains(&"mysqlx"));
    }

    #[test]
    fn bootstrap_sql_creates_user_for_tcp_and_socket_and_the_database() {
        let sql = bootstrap_sql(Flavor::Mysql, Version::new(9, 7, 4), "sbtest", "pa'ss", "sbtest");
        assert_eq!(
            sql,
            vec![
                "CREATE USER IF NOT EXISTS 'sbtest'@'%' IDENTIFIED WITH caching_sha2_password BY 'pa''ss'",
                "GRANT ALL PRIVILEGES ON *.* TO 'sbtest'@'%' WITH GRANT OPTION",
                "CREATE USER IF NOT EXISTS 'sbtest'@'localhost' IDENTIFIED WITH caching_sha2_password BY 'pa''ss'",
                "GRANT ALL PRIVILEGES ON *.* TO 'sbtest'@'localhost' WITH GRANT OPTION",
                "CREATE DATABASE IF NOT EXISTS `sbtest`",
            ]
        );
        let sql = bootstrap_sql(Flavor::Mariadb, Version::new(10, 11, 19), "sbtest", "sbpass", "db");
        assert_eq!(sql[0], "CREATE USER IF NOT EXISTS 'sbtest'@'%' IDENTIFIED BY 'sbpass'");
        let sql = bootstrap_sql(Flavor::Mysql, Version::new(5, 7, 44), "u", "p", "d");
        assert_eq!(sql[0], "CREATE USER IF NOT EXISTS 'u'@'%' IDENTIFIED WITH mysql_native_password BY 'p'");
    }

    #[test]
    fn default_auth_plugins() {
        assert_eq!(default_auth_plugin(Flavor::Mysql, Version::new(5, 7, 44)), "mysql_native_password");
        assert_eq!(default_auth_plugin(Flavor::Mysql, Version::new(8, 0, 36)), "caching_sha2_password");
        assert_eq!(default_auth_plugin(Flavor::Percona, Version::new(8, 4, 0)), "caching_sha2_password");
        assert_eq!(default_auth_plugin(Flavor::Mariadb, Version::new(11, 8, 9)), "mysql_native_password");
    }
}
