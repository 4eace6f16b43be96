//! Any string, through every generator that writes values into text something else reads: accepted,
//! it comes back as exactly the one value (word, field, option, literal) it was; refused, the error is
//! one line that names the flag or file.

use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use proptest::prelude::*;

use crate::fleet::k8s::{self, K8sOptions};
use crate::fleet::{FleetJob, slurm};
use crate::server::config;
use crate::server::flavor::quote_string;
use crate::server::mycnf::MyCnf;

/// Strings rich in what breaks lines, words and fields: any character, and often one of these.
fn hostile() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        '\n', '\r', '\t', '\0', '\x0b', '\x1a', '\u{85}', '\u{2028}', '\'', '"', '$', '`', '\\', ' ', ';', '&', '|',
        '#', '=', '%', '*', '(', ')', '[', ']', ':', '.', ',', '/', '@', '-', '_', 'a', 'Z', '0', '9', 'é',
    ]);
    prop::collection::vec(prop_oneof![3 => special, 1 => any::<char>()], 0..16).prop_map(|v| v.into_iter().collect())
}

/// Half the time a value of `plain` (mostly accepted), half the time [`hostile`].
fn either(plain: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![plain, hostile()]
}

fn job(dir: &str, name: &str, store: &str, versus: &str) -> FleetJob {
    FleetJob {
        name: name.into(),
        plan_id: "p-0123456789abcdef".into(),
        blocks: 3,
        hosts: 2,
        file: PathBuf::from(format!("/exp/{dir}/x.toml")),
        definition: "name = \"x\"\n".into(),
        config_files: Vec::new(),
        store: store.into(),
        versus: versus.into(),
        time_limit: std::time::Duration::from_secs(3600),
        partition: None,
        constraint: None,
    }
}

/// One line, starting with the flag or file it is about.
fn one_line_naming(e: &crate::error::Error, names: &[&str]) -> Result<(), TestCaseError> {
    let text = e.to_string();
    prop_assert!(!text.contains(['\n', '\r']), "{text:?}");
    prop_assert!(names.iter().any(|n| text.contains(n)), "{text:?} names none of {names:?}");
    Ok(())
}

/// The words bash makes of the script's `export VERSUS_DB=…` and `exec …` lines.
fn shell_words(script: &str) -> Vec<String> {
    let export = script.lines().find(|l| l.starts_with("export VERSUS_DB=")).unwrap();
    let exec = script.lines().find(|l| l.starts_with("exec ")).unwrap();
    let probe = format!(
        "set -eu\nSLURM_ARRAY_TASK_ID=7\n{export}\nprintf '%s\\0' \"$VERSUS_DB\"\n{}\n",
        exec.replacen("exec ", "printf '%s\\0' ", 1)
    );
    let out = Command::new("bash").arg("-c").arg(&probe).output().unwrap();
    assert!(out.status.success(), "{probe}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_terminator('\0').map(str::to_string).collect()
}

/// What MySQL reads from a string literal (backslash escapes on, the default `sql_mode`).
fn read_literal(lit: &str) -> Option<String> {
    let inner = lit.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(match chars.next()? {
                'n' => '\n',
                'r' => '\r',
                '0' => '\0',
                'Z' => '\x1a',
                't' => '\t',
                'b' => '\x08',
                other => other,
            }),
            '\'' => {
                if chars.next()? != '\'' {
                    return None;
                }
                out.push('\'');
            }
            c => out.push(c),
        }
    }
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn sbatch_values_stay_in_their_line_and_word(
        partition in either("[a-z0-9_.-]{1,8}"), constraint in either("[a-z0-9_.&|,*:()-]{1,8}"), name in hostile(),
        dir in either("[a-z0-9_.@=+,:-]{1,8}"), store in either("[ -~]{0,12}"), versus in hostile(),
    ) {
        let mut j = job(&dir, &name, &store, &versus);
        j.partition = Some(partition.clone());
        j.constraint = Some(constraint.clone());
        let mut plain = job("d", "x", "s", "v");
        (plain.partition, plain.constraint) = (Some("p".into()), Some("c".into()));
        let plain = slurm::sbatch(&plain).unwrap();
        match slurm::sbatch(&j) {
            Err(e) => one_line_naming(&e, &["--partition", "--constraint", "--db", "x.toml", "versus program"])?,
            Ok(script) => {
                // The same lines as a job of plain values, each value on the line made for it.
                prop_assert_eq!(script.lines().count(), plain.lines().count(), "{}", script);
                prop_assert!(script.lines().any(|l| l == format!("#SBATCH --partition={partition}")), "{}", script);
                prop_assert!(script.lines().any(|l| l == format!("#SBATCH --constraint={constraint}")), "{}", script);
                let out = script.lines().find(|l| l.starts_with("#SBATCH --output=")).unwrap();
                // The same path as written (a `.` component may be left out).
                let want = format!("/exp/{dir}/{}-%A_%a.out", j.job_name());
                let got = out.strip_prefix("#SBATCH --output=").unwrap_or(out);
                prop_assert_eq!(std::path::Path::new(got), std::path::Path::new(&want), "{}", out);
                for (a, b) in script.lines().zip(plain.lines()) {
                    // Only the #SBATCH values and the shell words differ; comments stay comments.
                    prop_assert_eq!(a.starts_with('#'), b.starts_with('#'), "{}", script);
                }
                let words = shell_words(&script);
                let file = j.file.display().to_string();
                let expected = [store.as_str(), &versus, "run", &file, "--block", "7", "--plan-id", "p-0123456789abcdef"];
                prop_assert_eq!(words, expected.map(String::from).to_vec());
            }
        }
    }

    #[test]
    fn manifest_values_stay_in_their_field(
        constraint in either("[A-Za-z0-9][A-Za-z0-9_.-]{0,6}[a-z]"), image in either("[a-z0-9]{1,6}(/[a-z0-9]{1,4})?(:[a-z0-9]{1,4})?"),
        secret in either("[a-z0-9]{1,8}"), name in hostile(), store in hostile(), cnf in either("[A-Za-z0-9._-]{1,8}"),
    ) {
        let mut j = job("d", &name, &store, "/v");
        j.constraint = Some(constraint.clone());
        j.config_files = vec![(cnf.clone(), "[mysqld]\n".into())];
        let opts = K8sOptions { image: image.clone(), password_secret: secret.clone() };
        match k8s::manifest(&j, &opts) {
            Err(e) => one_line_naming(&e, &["--constraint", "--image", "--password-secret", "--db", "x.toml", "versus program"])?,
            Ok(text) => {
                let (header, docs) = text.split_once("\n---\n").unwrap();
                prop_assert!(header.lines().all(|l| l.starts_with("# ")) && header.lines().count() == 2, "{}", text);
                let docs: Vec<&str> = docs.split("\n---\n").collect();
                prop_assert_eq!(docs.len(), 2, "{}", text);
                let config: ConfigMap = serde_norway::from_str(docs[0]).unwrap();
                prop_assert_eq!(&config, &k8s::config_map(&j));
                prop_assert!(config.data.unwrap().contains_key(&cnf));
                let back: Job = serde_norway::from_str(docs[1]).unwrap();
                prop_assert_eq!(&back, &k8s::indexed_job(&j, &opts));
                let pod = back.spec.unwrap().template.spec.unwrap();
                prop_assert_eq!(&pod.node_selector.unwrap()[k8s::HOST_CLASS_LABEL], &constraint);
                let c = &pod.containers[0];
                prop_assert_eq!(c.image.as_deref(), Some(image.as_str()));
                prop_assert_eq!(c.env.as_ref().unwrap()[0].value.as_deref(), Some(store.as_str()));
            }
        }
    }

    #[test]
    fn set_values_stay_one_option_of_the_generated_my_cnf(name in either("[a-z_-]{1,8}"), value in hostile()) {
        let set = format!("{name}={value}");
        match config::render("sb", "build", None, &[], std::slice::from_ref(&set)) {
            Err(e) => one_line_naming(&e, &["--set"])?,
            Ok(text) => {
                // The option as `--set` reads it (split at the first '=', trimmed) is what the file holds.
                let (n, v) = config::parse_override(&set).unwrap();
                let back = MyCnf::parse(&text, Path::new("/sb/my.cnf")).unwrap();
                let last = back.sections().last().unwrap();
                let entries: Vec<_> = last.get_all(&n).collect();
                prop_assert_eq!(entries.len(), 1, "{}", text);
                prop_assert_eq!(entries[0].value(), v.as_deref(), "{}", text);
                let plain = config::render("sb", "build", None, &[], &["x=1".to_string()]).unwrap();
                prop_assert_eq!(text.lines().count(), plain.lines().count(), "{}", text);
            }
        }
    }

    #[test]
    fn sql_literals_stay_on_one_line_and_read_back(s in hostile()) {
        let lit = quote_string(&s);
        prop_assert!(!lit.contains(['\n', '\r', '\0', '\x1a']), "{:?}", lit);
        prop_assert_eq!(read_literal(&lit), Some(s));
    }
}
