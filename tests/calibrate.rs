//! `versus calibrate` end to end on a real sandboxed MariaDB: an A/A experiment of tiny runs stores
//! this host's CV and noise band for the workload and thread count, `versus compare` then uses that
//! band (and names it) for runs of that workload and threads on this host, the default for the
//! thread count not calibrated, and `versus run`'s adaptive looks say which band they use.

use std::process::{Command, Stdio};

use versus::store::Store;

struct Env {
    home: tempfile::TempDir,
}

impl Env {
    fn versus(&self, args: &[&str]) -> std::process::Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_versus"));
        c.args(args).env("VERSUS_HOME", self.home.path()).env_remove("VERSUS_DB").stdin(Stdio::null());
        c.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> (String, String) {
        let out = self.versus(args);
        let (o, e) =
            (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
        assert!(out.status.success(), "versus {args:?}:\n{o}\n{e}");
        (o, e)
    }

    fn report(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["report", "--format", "json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all).0).unwrap()
    }
}

const WORKLOAD: &[&str] = &["--workload", "oltp_point_select", "--tables", "1", "--table-size", "1000"];

/// An unknown build fails `--dry-run` as it fails the real run: one line, exit 1, nothing printed.
#[test]
fn a_dry_run_of_an_unknown_build_is_refused() {
    let env = Env { home: tempfile::tempdir().unwrap() };
    let out = env.versus(&["calibrate", "nosuchbuild", "--workload", "oltp_point_select", "--dry-run"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("versus: error: ") && err.contains("unknown build 'nosuchbuild'"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty(), "no experiment printed");
}

#[test]
fn a_calibrated_band_is_stored_and_used_by_compare_and_run() {
    let env = Env { home: tempfile::Builder::new().prefix("versus-calibrate-").tempdir().unwrap() };
    env.ok(&["server", "fetch", "system"]);

    // Refused before anything runs.
    let out = env.versus(&["calibrate", "--workload", "oltp_point_select", "--repetitions", "2"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("at least 3 repetitions"));

    // A band of ±100 % or more is refused (it would call nothing). On a loaded 2-core host 1-s runs
    // can be that noisy; then the calibration is measured again with more and longer runs, as the
    // refusal says to.
    let mut tps = None;
    for (reps, duration) in [("4", "1s"), ("6", "2s")] {
        let mut args = vec!["calibrate", "system", "--threads", "1", "--duration", duration, "--repetitions", reps];
        args.extend_from_slice(WORKLOAD);
        let (out, err) = env.ok(&args);
        let store = Store::open(env.home.path().join("results.db")).unwrap();
        match store.calibrations(None).unwrap().into_iter().find(|c| c.metric == "tps") {
            Some(c) => {
                assert!(out.contains("stored for host class hc-"), "{out}\n{err}");
                assert_eq!(c.repetitions.to_string(), reps);
                tps = Some(c);
                break;
            }
            None => {
                assert!(
                    err.contains("not stored: oltp_point_select @ 1 thr tps: the A/A interval reaches beyond ±100 %")
                );
                eprintln!("calibration refused at {reps} × {duration}, measuring again:\n{err}");
            }
        }
    }
    let tps = tps.expect("a tps band is stored");
    let store = Store::open(env.home.path().join("results.db")).unwrap();
    assert_eq!((tps.workload.as_str(), tps.threads), ("oltp_point_select", 1));
    assert!(tps.cv > 0.0 && tps.band > 0.0 && tps.band < 1.0, "{tps:?}");
    let aa = tps.experiment_id.unwrap();
    let runs = store.runs(aa).unwrap();
    assert_eq!(runs.len() as u32, 2 * tps.repetitions, "the repetitions of A and of A again");
    // The stored band is the A/A rule over the stored runs (recomputed here from them).
    let side = |label: &str| -> Vec<f64> {
        let mut v: Vec<(u32, f64)> = runs
            .iter()
            .filter(|r| r.cell.target == label)
            .map(|r| (r.repetition, r.summary.as_ref().unwrap().tps))
            .collect();
        v.sort_by_key(|x| x.0);
        v.into_iter().map(|x| x.1).collect()
    };
    let cfg =
        versus::stats::BootstrapConfig { seed: store.experiment(aa).unwrap().unwrap().seed, ..Default::default() };
    let again = versus::stats::calibrate::calibrate(&side("A"), &side("A again"), &cfg).unwrap();
    assert!((again.band - tps.band).abs() < 1e-12 && (again.cv - tps.cv).abs() < 1e-12, "{again:?} vs {tps:?}");
    drop(store);
    let (list, _) = env.ok(&["calibrate", "--list"]);
    assert!(list.contains(&tps.host_class) && list.contains("oltp_point_select"), "{list}");

    // compare of the A/A experiment uses the calibrated band and names it; --noise-band overrides it.
    let r = env.report(&[&aa.to_string()]);
    assert_eq!(r["noise_band"].as_f64(), Some(tps.band), "{}", r["noise_band_source"]);
    let source = r["noise_band_source"].as_str().unwrap();
    assert!(
        source.contains(&format!("on host class {}", tps.host_class)) && source.contains(&format!("experiment {aa}"))
    );
    let r = env.report(&[&aa.to_string(), "--noise-band", "3%"]);
    assert_eq!(
        (r["noise_band"].as_f64(), r["noise_band_source"].as_str()),
        (Some(0.03), Some("given with --noise-band"))
    );
    let (text, _) = env.ok(&["compare", &aa.to_string(), "--brief", "--color", "never"]);
    assert!(text.contains("calibrated by `versus calibrate` on host class"), "{text}");

    // An adaptive experiment of the same workload at 1 and 2 threads: the looks use the calibrated
    // band at 1 thread and the default at 2; compare says which and uses the larger for the report.
    let file = env.home.path().join("two.toml");
    std::fs::write(
        &file,
        "name = \"two\"\nbuilds = [\"system\"]\nthreads = [1, 2]\nduration = \"1s\"\n\
         repetitions = { min = 2, max = 3 }\n\
         [[configs]]\nname = \"one\"\nset = { innodb_flush_log_at_trx_commit = 2 }\n\
         [[configs]]\nname = \"two\"\nset = { innodb_flush_log_at_trx_commit = 2 }\n\
         [[workloads]]\ntest = \"oltp_point_select\"\noptions = { tables = 1, table-size = 1000 }\n",
    )
    .unwrap();
    let (_, err) = env.ok(&["run", file.to_str().unwrap()]);
    let line = err.lines().find(|l| l.contains("noise band of the looks")).unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!(
            "calibrated on host class {}: oltp_point_select @ 1 thr {:.1} %",
            tps.host_class,
            tps.band * 100.0
        )) && line.contains("the default 2.0 % elsewhere"),
        "{line}"
    );
    let r = env.report(&["two"]);
    assert_eq!(r["noise_band"].as_f64(), Some(tps.band.max(0.02)));
    let source = r["noise_band_source"].as_str().unwrap();
    assert!(source.contains("not calibrated: oltp_point_select @ 2 thr"), "{source}");
    // `versus run --noise-band` overrides the calibration in the looks.
    let (_, err) = env.ok(&["run", file.to_str().unwrap(), "--noise-band", "5%"]);
    assert!(err.contains("noise band of the looks: given with --noise-band"), "{err}");
    let r = env.report(&["two", "--threads", "2"]);
    assert!(r["noise_band_source"].as_str().unwrap().starts_with("the default (no tps calibration"), "{r}");
}
