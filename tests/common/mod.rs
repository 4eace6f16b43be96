//! Shared fixtures for the integration tests: real servers in temporary sandboxes.
#![allow(dead_code)]

use std::path::PathBuf;

use versus::server::{Build, Flavor, Layout, Sandbox, SandboxSpec, Source, Version};

/// The distribution's MariaDB under /usr as a build (the tests' default server).
pub fn system_build() -> Build {
    let usr = PathBuf::from("/usr");
    let out = std::process::Command::new("/usr/sbin/mariadbd")
        .args(["--no-defaults", "--version"])
        .output()
        .expect("the tests need the distribution's MariaDB: apt-get install mariadb-server");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let version = Version::find_in(text.split("Ver").nth(1).unwrap_or(&text)).expect("mariadbd --version");
    Build {
        name: "system".into(),
        flavor: Flavor::Mariadb,
        version,
        version_string: version.to_string(),
        root: usr.clone(),
        layout: Layout {
            basedir: usr.clone(),
            server: usr.join("sbin/mariadbd"),
            install_db: Some(usr.join("bin/mariadb-install-db")),
            client: Some(usr.join("bin/mariadb")),
            admin: Some(usr.join("bin/mariadb-admin")),
            plugin_dir: usr.join("lib/mysql/plugin"),
            messages_dir: usr.join("share/mysql"),
        },
        source: Source::Path,
        size_bytes: 0,
    }
}

/// A sandbox of `build` in a fresh temporary directory; the directory lives as long as the guard.
pub struct TempSandbox {
    pub sandbox: Sandbox,
    pub dir: tempfile::TempDir,
}

impl std::ops::Deref for TempSandbox {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

impl std::ops::DerefMut for TempSandbox {
    fn deref_mut(&mut self) -> &mut Sandbox {
        &mut self.sandbox
    }
}

/// Starts `build` with `overrides` in a temporary sandbox directory.
pub fn start(build: Build, overrides: &[&str]) -> TempSandbox {
    let dir = tempfile::Builder::new().prefix("versus-test-").tempdir().expect("temp dir");
    let mut spec = SandboxSpec::new("test", build, dir.path().join("sb"));
    spec.overrides = overrides.iter().map(|s| s.to_string()).collect();
    let sandbox = Sandbox::start(spec).unwrap_or_else(|e| panic!("sandbox did not start: {e}"));
    TempSandbox { sandbox, dir }
}
