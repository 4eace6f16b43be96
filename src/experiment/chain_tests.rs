//! Planning workloads whose runs form chains on one server (the Insert Benchmark's steps).

use std::path::Path;

use super::plan::Plan;
use super::spec::ExperimentFile;

const FILE: &str = r#"
name = "ib"
builds = ["a", "b"]
threads = [1, 2]
repetitions = 2
[[workloads]]
test = "oltp_point_select"
[[workloads]]
test = "ibench"
options = { rows = 1000, rows-i1 = 100, rows-i2 = 10, query-seconds = 2, rates = [100, 200], steps = "l.i0,l.x,cleanup,qr100,qp200" }
"#;

fn plan(text: &str) -> Plan {
    Plan::new(&ExperimentFile::parse(text).unwrap(), Path::new("/")).unwrap()
}

fn step_name(p: &Plan, workload: usize) -> Option<String> {
    p.workloads[workload].stored_options().get("step")?.as_str().map(str::to_string)
}

#[test]
fn an_ibench_workload_becomes_one_cell_per_measured_step() {
    let p = plan(FILE);
    let labels: Vec<String> = p.workloads.iter().map(|w| w.label()).collect();
    assert_eq!(labels, ["oltp_point_select", "ibench/l.i0", "ibench/l.x", "ibench/qr100", "ibench/qp200"]);
    assert_eq!(p.cells.len(), 2 * 5 * 2);
    let w = &p.workloads[3];
    assert_eq!(step_name(&p, 3).as_deref(), Some("qr100"));
    assert_eq!(w.link().map(|l| l.chain), Some("ibench".to_string()));
    assert_eq!(w.stored_options()["sequence"], "ibench");
    assert!(p.workloads[0].link().is_none(), "sysbench runs are not chained");
    let keys: Vec<&str> = p.preparations.iter().map(|p| p.key.as_str()).collect();
    assert!(keys.contains(&"build=a;ibench") && keys.contains(&"build=b;ibench"), "{keys:?}");
    assert!(p.describe().contains("ibench workloads: one run per step"));
}

#[test]
fn the_steps_of_a_sequence_run_back_to_back_in_order() {
    let p = plan(FILE);
    let mut i = 0;
    while i < p.runs.len() {
        let r = p.runs[i];
        let c = &p.cells[r.cell];
        if step_name(&p, c.workload).is_none() {
            i += 1;
            continue;
        }
        let names: Vec<String> = p.runs[i..i + 4]
            .iter()
            .map(|x| {
                let cx = &p.cells[x.cell];
                assert_eq!((cx.target, cx.threads, x.repetition), (c.target, c.threads, r.repetition));
                step_name(&p, cx.workload).unwrap_or_default()
            })
            .collect();
        assert_eq!(names, ["l.i0", "l.x", "qr100", "qp200"]);
        let last: Vec<bool> = p.runs[i..i + 4]
            .iter()
            .map(|x| p.workloads[p.cells[x.cell].workload].link().is_some_and(|l| l.last))
            .collect();
        assert_eq!(last, [false, false, false, true], "the server stops after the last step");
        i += 4;
    }
    assert_eq!(p.runs.len(), 2 * 2 * 2 * 5);
}

#[test]
fn bad_ibench_options_are_refused_when_the_file_is_read() {
    let cases = [
        ("rates = [100, 200]", "rates = [0]", "rates: 0 is out of range"),
        ("query-seconds = 2", "query-seconds = -1", "query-seconds: -1 is out of range"),
        ("rows = 1000", "rows = 1000, rpc-load = 0", "rpc-load: 0 is out of range"),
        ("rows = 1000", "rows = 1000, clients = 3", "set the clients with threads"),
        ("rows = 1000", "rows = 1000, colour = 3", "unknown ibench option 'colour'"),
        ("steps = \"l.i0,l.x,cleanup,qr100,qp200\"", "steps = \"qr300\"", "step qr300 needs rate 300"),
        ("rows = 1000", "rows = 1000, step = \"l.i0\"", "choose the steps with options.steps"),
    ];
    for (from, to, want) in cases {
        let err = ExperimentFile::parse(&FILE.replace(from, to)).unwrap_err();
        assert!(err.contains(want) && err.contains("workload ibench"), "{to}: {err}");
    }
}
