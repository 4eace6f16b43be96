//! Oracle MySQL 5.5 to 9.x (and Percona Server, which shares its command line): `mysql_install_db` for
//! 5.5/5.6, `mysqld --initialize-insecure` from 5.7.6, `secure_file_priv` pinned inside the sandbox, the X
//! plugin off, and the authentication plugin and user syntax of each generation.

use super::{CommandLine, InstancePaths};
use crate::server::build::{Build, Version};

/// From 8.0 the X plugin is built in and listens on 33060 on all addresses unless turned off.
const MYSQLX_BUILT_IN: Version = Version::new(8, 0, 0);
/// From 8.0 new users get caching_sha2_password; 9.x no longer has mysql_native_password at all.
const CACHING_SHA2_DEFAULT: Version = Version::new(8, 0, 4);

/// `mysqld --initialize-insecure` appeared in 5.7.6; before it the datadir is made by `mysql_install_db`
/// (a shell script in 5.5, a Perl script in 5.6).
const INITIALIZE_INSECURE: Version = Version::new(5, 7, 6);
/// `CREATE USER IF NOT EXISTS … IDENTIFIED WITH plugin BY 'password'` is accepted from 5.7.6.
const CREATE_USER_IF_NOT_EXISTS: Version = Version::new(5, 7, 6);

pub(super) fn uses_install_script(version: Version) -> bool {
    version < INITIALIZE_INSECURE
}

pub(super) fn init_command(build: &Build, paths: &InstancePaths, run_as: Option<&str>) -> CommandLine {
    if uses_install_script(build.version) {
        return super::install_script_command(build, paths, run_as);
    }
    CommandLine {
        program: build.layout.server.clone(),
        args: vec![format!("--defaults-file={}", paths.cnf.display()), "--initialize-insecure".into()],
    }
}

pub(super) fn required_options(version: Version, _paths: &InstancePaths) -> Vec<(String, Option<String>)> {
    // secure_file_priv (which Debian's and Oracle's builds default to a system directory, aborting without
    // it) is set for every flavor in `sandbox_options`.
    let mut o = Vec::new();
    if version >= MYSQLX_BUILT_IN {
        o.push(("mysqlx".into(), Some("OFF".into())));
    }
    o
}

pub(super) fn default_auth_plugin(version: Version) -> &'static str {
    if version >= CACHING_SHA2_DEFAULT { "caching_sha2_password" } else { "mysql_native_password" }
}

/// `IDENTIFIED …` for a new or changed account: the version's default plugin from 5.7.6, plain
/// `IDENTIFIED BY` before.
pub(super) fn identified_by(version: Version, password: &str) -> String {
    if version < CREATE_USER_IF_NOT_EXISTS {
        return format!("IDENTIFIED BY {password}");
    }
    format!("IDENTIFIED WITH {} BY {password}", default_auth_plugin(version))
}

/// Whether `CREATE USER IF NOT EXISTS`, `ALTER USER … IDENTIFIED` and `DROP USER IF EXISTS` exist (5.7.6+).
pub(super) fn has_account_if_clauses(version: Version) -> bool {
    version >= CREATE_USER_IF_NOT_EXISTS
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::server::build::Flavor;

    #[test]
    fn init_is_initialize_insecure_after_the_defaults_file() {
        for (flavor, v) in [
            (Flavor::Mysql, Version::new(5, 7, 44)),
            (Flavor::Mysql, Version::new(8, 0, 36)),
            (Flavor::Mysql, Version::new(8, 4, 3)),
            (Flavor::Percona, Version::new(8, 0, 36)),
        ] {
            let c = super::super::init_command(&build(flavor, v, true), &paths(), Some("root"));
            assert_eq!(c.display(), "/opt/srv/bin/mysqld --defaults-file=/sb/x/my.cnf --initialize-insecure", "{v}");
        }
        let c = super::super::init_command(&build(Flavor::Mysql, Version::new(9, 7, 4), false), &paths(), None);
        assert_eq!(c.display(), "/opt/srv/usr/sbin/mysqld --defaults-file=/sb/x/my.cnf --initialize-insecure");
    }

    #[test]
    fn mysql_5_5_and_5_6_are_initialised_by_mysql_install_db() {
        for v in [Version::new(5, 5, 62), Version::new(5, 6, 44), Version::new(5, 7, 5)] {
            let c = super::super::init_command(&build(Flavor::Mysql, v, true), &paths(), Some("root"));
            assert_eq!(
                c.display(),
                "/opt/srv/scripts/mysql_install_db --defaults-file=/sb/x/my.cnf --basedir=/opt/srv \
                 --datadir=/sb/x/data --user=root",
                "{v}"
            );
            assert!(super::super::uses_install_script(Flavor::Mysql, v));
        }
        assert!(!super::super::uses_install_script(Flavor::Mysql, Version::new(5, 7, 6)));
        assert!(super::super::uses_install_script(Flavor::Mariadb, Version::new(11, 8, 0)));
        let a = super::super::Accounts { root_password: "r", user: "u", password: "p", database: "d" };
        let sql = super::super::bootstrap_sql(Flavor::Mysql, Version::new(5, 6, 44), &a);
        assert!(sql.contains(&"GRANT USAGE ON *.* TO 'u'@'%' IDENTIFIED BY 'p'".to_string()), "{sql:?}");
        assert!(sql.iter().all(|s| !s.contains("GRANT ALL")), "{sql:?}");
    }

    #[test]
    fn start_reads_only_the_sandbox_option_file() {
        let c = super::super::start_command(&build(Flavor::Mysql, Version::new(8, 4, 3), true), &paths());
        assert_eq!(c.display(), "/opt/srv/bin/mysqld --defaults-file=/sb/x/my.cnf");
    }
}
