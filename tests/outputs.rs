//! An output never replaces an input: every command that writes a file the user names (`report -o`,
//! `fleet slurm|k8s -o`, `ibench -o`, `explain --report`, `series --report`, `advise --cnf`) refuses,
//! before anything runs, a file it reads, any results store, recovery file or experiment file, by
//! whatever spelling or link it is reached, and leaves it byte for byte as it was.

#[path = "common/disk.rs"]
mod disk;

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use versus::store::Store;

const EXPERIMENT: &str = "name = \"e\"\nbuilds = [\"system\"]\nthreads = [1]\nduration = \"1s\"\nrepetitions = 1\n\n\
[[configs]]\nname = \"base\"\nfile = \"base.cnf\"\n\n[[workloads]]\ntest = \"oltp_read_only\"\n";

/// A home, a results store with the schema, an experiment file and the option file it names.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Store::open(dir.path().join("results.db")).unwrap();
        std::fs::write(dir.path().join("exp.toml"), EXPERIMENT).unwrap();
        std::fs::write(dir.path().join("base.cnf"), "[mysqld]\ninnodb_buffer_pool_size=64M\n").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        Setup { dir }
    }

    fn p(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn store(&self) -> String {
        self.p("results.db").display().to_string()
    }

    /// Runs versus in the setup's directory; returns the exit code and stderr.
    fn run(&self, args: &[&str]) -> (Option<i32>, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_versus"))
            .args(args)
            .current_dir(self.dir.path())
            .env("VERSUS_HOME", self.p("home"))
            .env_remove("VERSUS_DB")
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    /// Every file under the setup, with its bytes (the store's -wal/-shm included).
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut v = Vec::new();
        for dir in [self.dir.path().to_path_buf(), self.p("sub")] {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let meta = std::fs::symlink_metadata(&p).unwrap();
                if meta.is_file() {
                    v.push((p.clone(), std::fs::read(&p).unwrap()));
                } else if meta.file_type().is_symlink() {
                    v.push((p.clone(), std::fs::read_link(&p).unwrap().into_os_string().into_encoded_bytes()));
                }
            }
        }
        v.sort();
        v
    }

    /// `args` must be refused with one line naming `flag`, and leave every file as it was.
    fn refused(&self, args: &[&str], flag: &str) {
        let before = self.snapshot();
        let (code, err) = self.run(args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(&format!("versus: error: {flag}: ")), "{args:?}: {err}");
        assert!(err.contains("never writes its output over it"), "{args:?}: {err}");
        assert_eq!(self.snapshot(), before, "{args:?} changed a file");
    }
}

/// The ways one file is reached: its name, another spelling, a symbolic link, a hard link.
fn spellings(s: &Setup, name: &str) -> Vec<String> {
    let link = format!("sub/link-to-{name}");
    let hard = format!("sub/hard-{name}");
    if !s.p(&link).exists() {
        symlink(s.p(name), s.p(&link)).unwrap();
        std::fs::hard_link(s.p(name), s.p(&hard)).unwrap();
    }
    vec![name.to_string(), format!("./sub/../{name}"), s.p(name).display().to_string(), link, hard]
}

#[test]
fn report_never_writes_over_a_store_recovery_or_experiment_file() {
    let s = Setup::new();
    let db = s.store();
    for out in spellings(&s, "results.db") {
        s.refused(&["report", "--db", &db, "--format", "markdown", "-o", &out], "--output");
    }
    // Another store, a recovery file, an experiment file: not inputs of this command, still refused.
    Store::open(s.p("other.db")).unwrap();
    std::fs::write(s.p("r.json"), r#"{"kind": "versus-recovered-run", "store": "x"}"#).unwrap();
    for out in ["other.db", "r.json", "exp.toml"] {
        s.refused(&["report", "--db", &db, "--format", "markdown", "-o", out], "--output");
    }
    // A file that is none of these is replaced; through a link, the link stays and its file changes.
    std::fs::write(s.p("old.md"), "old").unwrap();
    symlink(s.p("old.md"), s.p("sub/md-link")).unwrap();
    let (code, err) = s.run(&["report", "--db", &db, "-o", "sub/md-link", "--format", "markdown"]);
    // The store holds no experiment: the report is refused for that, after the output was accepted.
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("never writes"), "{err}");
    assert!(std::fs::symlink_metadata(s.p("sub/md-link")).unwrap().file_type().is_symlink());
}

#[test]
fn fleet_never_writes_the_job_over_the_experiment_its_configs_or_the_store() {
    let s = Setup::new();
    let db = s.store();
    for kind in ["slurm", "k8s"] {
        for out in
            spellings(&s, "exp.toml").into_iter().chain(spellings(&s, "base.cnf")).chain(spellings(&s, "results.db"))
        {
            s.refused(&["fleet", kind, "exp.toml", "--db", &db, "-o", &out], "--output");
        }
    }
    // The default output, FILE with the job's extension, is checked too: `job.sbatch` itself, and
    // `job.k8s.yaml` when it is a link to the experiment file `job.toml`.
    std::fs::copy(s.p("exp.toml"), s.p("job.sbatch")).unwrap();
    s.refused(&["fleet", "slurm", "job.sbatch", "--db", &db], "--output");
    std::fs::copy(s.p("exp.toml"), s.p("job.toml")).unwrap();
    symlink(s.p("job.toml"), s.p("job.k8s.yaml")).unwrap();
    s.refused(&["fleet", "k8s", "job.toml", "--db", &db], "--output");
    // The SQL script of a workload.
    std::fs::write(s.p("w.sql"), "SELECT 1;\n").unwrap();
    std::fs::write(s.p("scripted.toml"), EXPERIMENT.replace("test = \"oltp_read_only\"", "script = \"w.sql\""))
        .unwrap();
    for out in spellings(&s, "w.sql") {
        s.refused(&["fleet", "slurm", "scripted.toml", "--db", &db, "-o", &out], "--output");
    }
    // A pipe through /dev/stdout is written to in place.
    let out = Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(["fleet", "slurm", "exp.toml", "--db", &db, "-o", "/dev/stdout"])
        .current_dir(s.dir.path())
        .env("VERSUS_HOME", s.p("home"))
        .env_remove("VERSUS_DB")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("#!"));
    // A new file is written.
    let (code, err) = s.run(&["fleet", "slurm", "exp.toml", "--db", &db, "-o", "sub/job.sbatch"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read_to_string(s.p("sub/job.sbatch")).unwrap().starts_with("#!"));
}

#[test]
fn ibench_checks_its_output_before_it_connects() {
    let s = Setup::new();
    for out in spellings(&s, "results.db").into_iter().chain(["exp.toml".into()]) {
        s.refused(&["ibench", "--port", "1", "--rows", "10", "-o", &out], "--output");
    }
}

#[test]
fn explain_series_and_advise_check_their_files_before_anything_runs() {
    let s = Setup::new();
    let db = s.store();
    for out in spellings(&s, "results.db") {
        s.refused(&["explain", "system", "system:log-bin", "--db", &db, "--report", &out], "--report");
        s.refused(&["series", "system", "system:log-bin", "--db", &db, "--report", &out], "--report");
        s.refused(&["advise", "system", "--db", &db, "--cnf", &out], "--cnf");
    }
    for out in spellings(&s, "base.cnf") {
        s.refused(
            &["explain", "system", "system", "--config-a", "base.cnf", "--db", &db, "--report", &out],
            "--report",
        );
        s.refused(&["advise", "system", "--config", "base.cnf", "--db", &db, "--cnf", &out], "--cnf");
    }
    s.refused(&["advise", "system", "--db", &db, "--cnf", "exp.toml"], "--cnf");
    // A SQL script the workload runs.
    std::fs::write(s.p("w.sql"), "SELECT 1;\n").unwrap();
    for out in spellings(&s, "w.sql") {
        s.refused(
            &["explain", "system", "system:log-bin", "--script", "w.sql", "--db", &db, "--report", &out],
            "--report",
        );
        s.refused(
            &["series", "system", "system:log-bin", "--script", "w.sql", "--db", &db, "--report", &out],
            "--report",
        );
        s.refused(&["advise", "system", "--script", "w.sql", "--db", &db, "--cnf", &out], "--cnf");
    }
    // The default store, in the home, is an input too.
    Store::open(s.p("home/results.db")).unwrap();
    s.refused(&["explain", "system", "system:log-bin", "--report", "home/results.db"], "--report");
}

/// A path whose directory is missing, or a directory, is refused with one line too.
#[test]
fn a_directory_or_a_missing_directory_is_refused() {
    let s = Setup::new();
    let db = s.store();
    s.refused(&["report", "--db", &db, "--format", "markdown", "-o", "sub"], "--output");
    let (code, err) = s.run(&["report", "--db", &db, "--format", "markdown", "-o", "nowhere/r.md"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with("versus: error: --output: cannot write nowhere/r.md"), "{err}");
}

/// A write that fails half-way (a full disk) leaves the file it was to replace as it was, and nothing
/// beside it. Needs root (a small tmpfs).
#[test]
fn a_failed_write_leaves_the_old_file_whole() {
    let s = Setup::new();
    let small = disk::SmallDisk::mount(&s.p("disk"), "1m");
    let disk = small.dir.clone();
    let old = disk.join("job.sbatch");
    std::fs::write(&old, "#!/bin/sh\n# the old script\n").unwrap();
    small.fill("filler");
    let (code, err) = s.run(&["fleet", "slurm", "exp.toml", "--db", &s.store(), "-o", "disk/job.sbatch"]);
    assert_eq!(code, Some(1), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("versus: error: --output: cannot write disk/job.sbatch"), "{err}");
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "#!/bin/sh\n# the old script\n");
    let mut left: Vec<String> =
        std::fs::read_dir(&disk).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, ["filler", "job.sbatch"], "a temporary file was left");
}

/// `store copy` never copies a store into itself, by any spelling or link (a hard link included), nor
/// into a file that is no store: every file stays as it was.
#[test]
fn store_copy_never_writes_into_what_it_reads() {
    let s = Setup::new();
    for to in spellings(&s, "results.db") {
        let before = s.snapshot();
        let (code, err) = s.run(&["store", "copy", "--from", "results.db", "--to", &to]);
        assert_eq!(code, Some(1), "{to}: {err}");
        assert!(err.starts_with("versus: error: --to: ") && err.lines().count() == 1, "{to}: {err}");
        assert_eq!(s.snapshot(), before, "{to}");
    }
    for to in ["exp.toml", "base.cnf"] {
        let before = s.snapshot();
        let (code, err) = s.run(&["store", "copy", "--from", "results.db", "--to", to]);
        assert_eq!(code, Some(1), "{to}: {err}");
        assert!(err.contains("not a versus results store"), "{to}: {err}");
        assert_eq!(s.snapshot(), before, "{to}");
    }
}
