//! The experiments versus writes itself (advise's and explain's steps, series): sandbox targets on
//! builds, configs that are a base file, one workload, shuffled blocks with a seed.

use std::path::Path;
use std::time::Duration;

use super::spec::{
    ConfigDef, ExperimentFile, Order, Repetitions, TargetDef, WorkloadDef, default_duration, default_threads,
};
use crate::workload::ConnectionCharset;

impl ExperimentFile {
    /// A generated experiment of `targets` running `workload`: prewarmed, not settled, pinned or
    /// cache-dropped, `repetitions` shuffled blocks in the order of `seed`. Threads, duration and
    /// warm-up are the file's defaults; callers set theirs.
    pub fn generated(
        name: String,
        description: String,
        configs: Vec<ConfigDef>,
        targets: Vec<TargetDef>,
        workload: WorkloadDef,
        repetitions: u32,
        seed: u64,
    ) -> ExperimentFile {
        ExperimentFile {
            name,
            description: Some(description),
            builds: vec![],
            configs,
            targets,
            workloads: vec![workload],
            threads: default_threads(),
            duration: default_duration(),
            warmup: Duration::ZERO,
            prewarm: true,
            settle: Duration::ZERO,
            profile: false,
            profile_hz: None,
            profile_waits: false,
            pin_cpus: false,
            drop_caches: false,
            repetitions: Repetitions::fixed(repetitions),
            order: Order::Shuffled,
            seed: Some(seed),
        }
    }
}

impl ConfigDef {
    /// A config that is the option file `file` alone (made absolute, so the experiment does not
    /// depend on the directory it is run from).
    pub fn of_file(name: String, file: &Path) -> ConfigDef {
        ConfigDef {
            name,
            file: Some(std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf())),
            set: toml::Table::new(),
            charset: None,
            collation: None,
            replication: None,
        }
    }
}

impl TargetDef {
    /// A sandbox of `build` labelled `name`, on config `config` (if any) with the overrides `set`,
    /// connecting with `charset` (if any).
    pub fn sandbox(
        name: String,
        build: String,
        config: Option<String>,
        set: toml::Table,
        charset: Option<&ConnectionCharset>,
    ) -> TargetDef {
        TargetDef {
            name: Some(name),
            build: Some(build),
            config,
            set,
            address: None,
            user: None,
            password_env: None,
            database: None,
            replace_tables: false,
            charset: charset.map(|c| c.charset.clone()),
            collation: charset.and_then(|c| c.collation.clone()),
            replication: None,
        }
    }
}
