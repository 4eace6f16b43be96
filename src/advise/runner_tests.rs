//! The plan of advise's steps.

use super::*;
use crate::experiment::spec::WorkloadDef;
use crate::metric::Metric;
use crate::server::build::{Build, Layout, Source};
use crate::server::{Flavor, Version};

fn opts() -> AdviseOptions {
    AdviseOptions {
        name: "advise".into(),
        workload: WorkloadDef {
            name: None,
            test: "oltp_read_write".into(),
            script: None,
            threads: None,
            options: toml::from_str("tables = 2\ntable-size = 1000").unwrap(),
        },
        threads: vec![2],
        duration: Duration::from_secs(2),
        warmup: Duration::ZERO,
        budget: Duration::from_secs(600),
        memory_gib: None,
        allow_durability: false,
        metric: Metric::Tps,
        noise_band: 0.02,
        noise_band_source: "test".into(),
        confidence: 0.95,
        seed: 1,
        screen_repetitions: 2,
        attribution_repetitions: 2,
        confirm_repetitions: 5,
        adaptive: None,
    }
}

#[test]
fn a_step_shapes_data_by_its_builds_server_line() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path());
    let root = dir.path().join("tree");
    home.register(&Build {
        name: "mysql-8.4".into(),
        flavor: Flavor::Mysql,
        version: Version::new(8, 4, 3),
        version_string: "8.4.3".into(),
        root: root.clone(),
        layout: Layout {
            basedir: root.clone(),
            server: root.join("bin/mysqld"),
            install_db: None,
            client: None,
            admin: None,
            plugin_dir: root.join("lib/plugin"),
            messages_dir: root.join("share"),
        },
        source: Source::Path,
        size_bytes: 0,
    })
    .unwrap();
    let current = TargetSpec {
        label: "current".into(),
        build: "mysql-8.4".into(),
        config: None,
        overrides: vec![],
        charset: None,
    };
    // innodb_compression_algorithm shapes the data of MariaDB only; on MySQL both configs share one
    // prepared data set, while a plan that does not know the line prepares twice.
    let targets = [
        ("current".to_string(), vec![]),
        ("current+compression".to_string(), vec!["innodb_compression_algorithm=lz4".to_string()]),
    ];
    let file = experiment(&current, &opts(), "advise-screen-1".into(), &targets, 2, vec![2], 1).unwrap();
    assert_eq!(step_plan(&file, &home).unwrap().preparations.len(), 1);
    assert_eq!(Plan::new(&file, Path::new("/")).unwrap().preparations.len(), 2, "the line matters");
    // One that shapes data everywhere still gets its own preparation.
    let targets = [
        ("current".to_string(), vec![]),
        ("current+rows".to_string(), vec!["innodb_default_row_format=compact".to_string()]),
    ];
    let file = experiment(&current, &opts(), "advise-screen-2".into(), &targets, 2, vec![2], 1).unwrap();
    assert_eq!(step_plan(&file, &home).unwrap().preparations.len(), 2);
}
