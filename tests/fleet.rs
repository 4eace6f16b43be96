//! Fleets: the sbatch script and the Kubernetes manifest as golden files, the manifest's round trip
//! through the typed Kubernetes API structures, and the command line.

use std::path::Path;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use versus::experiment::{ExperimentFile, Plan};
use versus::fleet::k8s::{self, K8sOptions};
use versus::fleet::{FleetJob, slurm};
use versus::store::Location;

const EXPERIMENT: &str = r#"
name = "Nightly durability"
builds = ["system"]
threads = [1, 4]
duration = "2s"
repetitions = 5
[[configs]]
name = "sync"
file = "base.cnf"
set = { innodb_flush_log_at_trx_commit = 1 }
[[configs]]
name = "nosync"
set = { innodb_flush_log_at_trx_commit = 0 }
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 1000 }
"#;

/// The job for EXPERIMENT in `dir`, with the machine-specific paths replaced by fixed ones.
fn job(dir: &Path, store: &str) -> FleetJob {
    std::fs::write(dir.join("nightly.toml"), EXPERIMENT).unwrap();
    std::fs::write(dir.join("base.cnf"), "[mysqld]\ninnodb_buffer_pool_size = 256M\n").unwrap();
    let (file, text) = ExperimentFile::load(&dir.join("nightly.toml")).unwrap();
    let plan = Plan::new(&file, dir).unwrap();
    let mut job = FleetJob::new(&plan, &dir.join("nightly.toml"), &text, &Location::parse(store), 3).unwrap();
    job.file = "/shared/exp/nightly.toml".into();
    job.versus = "/opt/versus/bin/versus".into();
    job
}

#[test]
fn sbatch_script_golden() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = job(dir.path(), "postgres://bench:hunter2@db.example:5432/versus");
    assert_eq!(j.blocks, 5);
    assert!(!j.store.contains("hunter2"), "{}", j.store);
    j.partition = Some("bench".into());
    j.constraint = Some("epyc-7b13".into());
    insta::assert_snapshot!("sbatch", slurm::sbatch(&j));
}

#[test]
fn kubernetes_manifest_golden_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = job(dir.path(), "postgres://bench@db.example/versus");
    j.constraint = Some("hc-0123456789ab".into());
    let opts = K8sOptions { image: "registry.example/versus:0.1.0".into(), password_secret: "versus-db".into() };
    let text = k8s::manifest(&j, &opts).unwrap();
    insta::assert_snapshot!("k8s_manifest", text);

    // Every document reads back into the typed structures it was written from.
    let docs: Vec<&str> = text.split("\n---\n").skip(1).collect();
    assert_eq!(docs.len(), 2, "{text}");
    let config: ConfigMap = serde_norway::from_str(docs[0]).unwrap();
    assert_eq!(config, k8s::config_map(&j));
    let back: Job = serde_norway::from_str(docs[1]).unwrap();
    assert_eq!(back, k8s::indexed_job(&j, &opts));
    let spec = back.spec.unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(5), Some(3)));
    let data = config.data.unwrap();
    assert!(data["experiment.toml"].contains("Nightly durability") && data.contains_key("base.cnf"));
}

#[test]
fn a_config_file_in_another_directory_cannot_go_into_a_config_map() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cnf")).unwrap();
    std::fs::write(dir.path().join("cnf/base.cnf"), "[mysqld]\n").unwrap();
    let mut j = job(dir.path(), "postgres://bench@db.example/versus");
    j.config_files = vec![("cnf/base.cnf".into(), "[mysqld]\n".into())];
    let e = k8s::manifest(&j, &K8sOptions::default()).unwrap_err().to_string();
    assert!(e.contains("'cnf/base.cnf' is in another directory"), "{e}");
}

#[test]
fn command_line_writes_the_script_and_warns_about_a_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nightly.toml");
    std::fs::write(&file, EXPERIMENT).unwrap();
    std::fs::write(dir.path().join("base.cnf"), "[mysqld]\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("versus")
        .unwrap()
        .args(["fleet", "slurm", file.to_str().unwrap(), "--hosts", "2"])
        .env("VERSUS_HOME", dir.path())
        .env_remove("VERSUS_DB")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is a SQLite file: that works only when every task runs on this machine"), "{stderr}");
    let script = std::fs::read_to_string(dir.path().join("nightly.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-4%2\n"), "{script}");
    assert!(script.contains(&format!("export VERSUS_DB={}", dir.path().join("results.db").display())), "{script}");

    let k = assert_cmd::Command::cargo_bin("versus")
        .unwrap()
        .args(["fleet", "k8s", file.to_str().unwrap(), "-o", "-", "--db", "postgres://u:secret@h/db"])
        .env("VERSUS_HOME", dir.path())
        .output()
        .unwrap();
    assert!(k.status.success(), "{}", String::from_utf8_lossy(&k.stderr));
    let yaml = String::from_utf8_lossy(&k.stdout);
    assert!(yaml.contains("completionMode: Indexed") && !yaml.contains("u:secret"), "{yaml}");

    let bad = assert_cmd::Command::cargo_bin("versus")
        .unwrap()
        .args(["fleet", "slurm", file.to_str().unwrap(), "--hosts", "0", "-o", "-"])
        .env("VERSUS_HOME", dir.path())
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--hosts: must be at least 1"));
}
