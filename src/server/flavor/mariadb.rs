//! MariaDB 10.x and 11.x: `mariadb-install-db`, root with normal authentication, native-password users.

use super::{CommandLine, InstancePaths};
use crate::server::build::{Build, Version};

/// `--auth-root-authentication-method` appeared in 10.4 (before it, root had no password by default).
const AUTH_METHOD_OPTION: Version = Version::new(10, 4, 0);
/// `--skip-test-db` of the install script.
const SKIP_TEST_DB: Version = Version::new(10, 5, 0);

pub(super) fn init_command(build: &Build, paths: &InstancePaths, run_as: Option<&str>) -> CommandLine {
    let mut command = super::install_script_command(build, paths, run_as);
    let args = &mut command.args;
    if build.version >= AUTH_METHOD_OPTION {
        args.push("--auth-root-authentication-method=normal".into());
    }
    if build.version >= SKIP_TEST_DB {
        args.push("--skip-test-db".into());
    }
    command
}

pub(super) fn required_options(_version: Version) -> Vec<(String, Option<String>)> {
    Vec::new()
}

pub(super) fn identified_by(_version: Version, password: &str) -> String {
    format!("IDENTIFIED BY {password}")
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::server::build::Flavor;

    #[test]
    fn debian_tree_init_uses_install_db_with_normal_root_auth() {
        let b = build(Flavor::Mariadb, Version::new(10, 11, 19), false);
        let c = init_command(&b, &paths(), Some("root"));
        assert_eq!(
            c.display(),
            "/opt/srv/usr/bin/mariadb-install-db --defaults-file=/sb/x/my.cnf --basedir=/opt/srv/usr \
             --datadir=/sb/x/data --user=root --auth-root-authentication-method=normal --skip-test-db"
        );
    }

    #[test]
    fn old_versions_get_only_the_options_they_know() {
        let b = build(Flavor::Mariadb, Version::new(10, 3, 39), true);
        let c = init_command(&b, &paths(), None);
        assert_eq!(
            c.display(),
            "/opt/srv/scripts/mariadb-install-db --defaults-file=/sb/x/my.cnf --basedir=/opt/srv --datadir=/sb/x/data"
        );
        let b = build(Flavor::Mariadb, Version::new(10, 4, 30), true);
        let args = init_command(&b, &paths(), Some("mysql")).args;
        assert!(args.contains(&"--auth-root-authentication-method=normal".to_string()));
        assert!(!args.contains(&"--skip-test-db".to_string()));
    }
}
