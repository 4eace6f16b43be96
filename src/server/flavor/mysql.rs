//! Oracle MySQL 5.7, 8.0, 8.4 and 9.x (and Percona Server, which shares its command line):
//! `mysqld --initialize-insecure`, `secure_file_priv` pinned inside the sandbox, the X plugin off.

use super::{CommandLine, InstancePaths};
use crate::server::build::{Build, Version};

/// From 8.0 the X plugin is built in and listens on 33060 on all addresses unless turned off.
const MYSQLX_BUILT_IN: Version = Version::new(8, 0, 0);
/// From 8.0 new users get caching_sha2_password; 9.x no longer has mysql_native_password at all.
const CACHING_SHA2_DEFAULT: Version = Version::new(8, 0, 4);

pub(super) fn init_command(build: &Build, paths: &InstancePaths) -> CommandLine {
    CommandLine {
        program: build.layout.server.clone(),
        args: vec![format!("--defaults-file={}", paths.cnf.display()), "--initialize-insecure".into()],
    }
}

pub(super) fn required_options(version: Version, paths: &InstancePaths) -> Vec<(String, Option<String>)> {
    // Debian's and Oracle's builds default secure_file_priv to a system directory and abort without it.
    let mut o = vec![("secure-file-priv".to_string(), Some(paths.files_dir.display().to_string()))];
    if version >= MYSQLX_BUILT_IN {
        o.push(("mysqlx".into(), Some("OFF".into())));
    }
    o
}

pub(super) fn default_auth_plugin(version: Version) -> &'static str {
    if version >= CACHING_SHA2_DEFAULT { "caching_sha2_password" } else { "mysql_native_password" }
}

pub(super) fn create_user(version: Version, user: &str, host: &str, password: &str) -> String {
    let plugin = default_auth_plugin(version);
    format!("CREATE USER IF NOT EXISTS {user}@'{host}' IDENTIFIED WITH {plugin} BY {password}")
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
            let c = super::super::init_command(&build(flavor, v, true), &paths(), true);
            assert_eq!(c.display(), "/opt/srv/bin/mysqld --defaults-file=/sb/x/my.cnf --initialize-insecure", "{v}");
        }
        let c = super::super::init_command(&build(Flavor::Mysql, Version::new(9, 7, 4), false), &paths(), true);
        assert_eq!(c.display(), "/opt/srv/usr/sbin/mysqld --defaults-file=/sb/x/my.cnf --initialize-insecure");
    }

    #[test]
    fn start_reads_only_the_sandbox_option_file() {
        let c = super::super::start_command(&build(Flavor::Mysql, Version::new(8, 4, 3), true), &paths());
        assert_eq!(c.display(), "/opt/srv/bin/mysqld --defaults-file=/sb/x/my.cnf");
    }
}
