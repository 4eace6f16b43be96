//! A versus home in a temporary directory with the distribution's build registered, and `versus`
//! run in it as a user does: what the integration tests that drive the command line share.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use versus::store::Store;

/// A temporary `VERSUS_HOME` (removed when dropped) where `server fetch system` was run.
pub struct Home {
    /// The directory.
    pub home: tempfile::TempDir,
}

impl Home {
    /// A new home whose directory name starts with `prefix`.
    pub fn new(prefix: &str) -> Home {
        Home::registered(tempfile::Builder::new().prefix(prefix).tempdir().unwrap())
    }

    /// A new home in cargo's temporary directory for integration tests (under `target/`), for a test
    /// whose servers need the checkout's storage rather than the system's temporary one, which may be
    /// memory where a flush waits for nothing.
    pub fn on_disk(prefix: &str) -> Home {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        Home::registered(tempfile::Builder::new().prefix(prefix).tempdir_in(dir).unwrap())
    }

    fn registered(dir: tempfile::TempDir) -> Home {
        let home = Home { home: dir };
        let out = home.versus(&["server", "fetch", "system"]).output().unwrap();
        assert!(out.status.success(), "server fetch: {}", String::from_utf8_lossy(&out.stderr));
        home
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.home.path()
    }

    /// `versus ARGS` in this home, with no `VERSUS_DB` of the caller's and no input.
    pub fn versus(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_versus"));
        c.args(args).env("VERSUS_HOME", self.home.path()).env_remove("VERSUS_DB").stdin(Stdio::null());
        c
    }

    /// Runs `versus ARGS`; returns (exit code, stdout, stderr).
    pub fn output(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.versus(args).output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }

    /// Writes `text` to `name` in the home and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.home.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Writes the experiment file `text` as `name`.toml in the home and returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        self.write(&format!("{name}.toml"), text)
    }

    /// `versus ARGS` under `taskset -c CPUS` (the process and its threads may run on those CPUs only),
    /// with `env` added to its environment.
    pub fn pinned(&self, cpus: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let mut c = Command::new("taskset");
        c.args(["-c", cpus, env!("CARGO_BIN_EXE_versus")]).args(args).envs(env.iter().copied());
        let out = c.env("VERSUS_HOME", self.home.path()).env_remove("VERSUS_DB").stdin(Stdio::null()).output();
        let out = out.expect("taskset (util-linux) runs");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }

    /// The JSON report that `versus ARGS` prints, checked against schemas/compare-report.schema.json.
    pub fn report_json(&self, args: &[&str]) -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_str(&ok(self.output(args), "report json")).unwrap();
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string("schemas/compare-report.schema.json").unwrap()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "the report does not match its schema: {errors:?}");
        doc
    }

    /// The home's default results store.
    pub fn store(&self) -> Store {
        Store::open(self.home.path().join("results.db")).unwrap()
    }
}

/// The stdout of `r` (from [`Home::output`]), failing with `what` and both outputs when it did not exit 0.
pub fn ok(r: (i32, String, String), what: &str) -> String {
    assert_eq!(r.0, 0, "{what} failed: {}{}", r.1, r.2);
    r.1
}
