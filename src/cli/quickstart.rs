//! `versus quickstart`: the README's first command, the whole loop on the distribution's MariaDB.

use clap::Args;

use crate::error::{Error, Result};
use crate::server::Home;
use crate::server::fetch::{self, FetchOptions};

#[derive(Debug, Args)]
pub(super) struct QuickstartArgs {
    /// The build to use [default: the distribution's MariaDB, registered as `system`].
    #[arg(long, default_value = "system")]
    build: String,
    /// Measured time of each run, for a shorter (or longer) look than the built-in 6 s [default: 6s].
    #[arg(long, value_name = "DURATION", value_parser = crate::experiment::spec::parse_duration)]
    duration: Option<std::time::Duration>,
    /// Repetitions of each config and thread count, from 1 [default: 5].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    repetitions: Option<u32>,
    #[command(flatten)]
    db: super::DbArg,
}

/// The quick start: the whole loop on the distribution's MariaDB. A built-in experiment (two durability
/// configs × two thread counts × five repetitions) runs with a progress bar, then the comparison is
/// printed and written as a self-contained HTML report.
pub(super) fn quickstart(home: &Home, args: QuickstartArgs) -> Result<i32> {
    const EXPERIMENT: &str = include_str!("../../examples/quickstart.toml");
    if args.duration.is_some_and(|d| d.is_zero()) {
        return Err(Error::option("--duration", "must be at least 1s"));
    }
    if home.build(&args.build).is_err() {
        if args.build != "system" {
            home.build(&args.build)?;
        }
        let b = fetch::fetch(home, "system", &FetchOptions::default(), &mut |l| eprintln!("{l}"))?;
        eprintln!("registered the distribution's MariaDB {} as build 'system'", b.version_string);
    }
    let dir = home.root().join("quickstart");
    crate::owned::create_dir_all(&dir)?;
    let file = dir.join("quickstart.toml");
    let mut text = EXPERIMENT.replace("builds = [\"system\"]", &format!("builds = [\"{}\"]", args.build));
    if let Some(d) = args.duration {
        text = text.replace("duration = \"6s\"", &format!("duration = \"{}s\"", d.as_secs()));
    }
    if let Some(n) = args.repetitions {
        text = text.replace("repetitions = 5", &format!("repetitions = {n}"));
    }
    crate::owned::write_file(&file, text.as_bytes(), 0o644)?;
    let (spec, text) = crate::experiment::ExperimentFile::load(&file)?;
    let plan = crate::experiment::Plan::new(&spec, &dir).map_err(|m| Error::file(&file, m))?;
    eprintln!("{}: {}", spec.name, spec.description.as_deref().unwrap_or_default());
    for c in &spec.configs {
        let set: Vec<String> = c.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
        eprintln!("  {}: {}", c.name, set.join(" "));
    }
    let mut store = args.db.open(home)?;
    let mut executor = crate::experiment::sandbox_executor::SandboxExecutor::locked(home, &spec.name)?;
    let mut progress = crate::experiment::Progress::stderr();
    let opts = crate::experiment::RunOptions::default();
    let outcome =
        crate::experiment::run_experiment(&text, Some(&file), &plan, &mut store, &mut executor, &opts, &mut progress)?;
    let _ = crate::owned::remove(executor.work_dir());
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    let selection =
        crate::report::Selection { experiments: vec![outcome.experiment_id.to_string()], ..Default::default() };
    let report = crate::report::build_report(&store, &selection)?;
    let color = anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
    println!(
        "{}",
        crate::report::terminal::render_with(
            &report,
            &crate::report::terminal::Options { color, brief: true, profile: false }
        )
    );
    let html = dir.join("report.html");
    let page = crate::report::render(&report, crate::report::Format::Html)?;
    super::output_file::OutputFile::check("--db", &html, &args.db.inputs(home))?.write(page.as_bytes())?;
    println!("HTML report: {}", html.display());
    println!(
        "results: {} (experiment {}); `versus compare {}` shows the full tables",
        store.path().display(),
        outcome.experiment_id,
        outcome.experiment_id
    );
    if let Some(line) = super::path_hint::line() {
        println!("{line}");
    }
    Ok(if outcome.failed > 0 { 1 } else { 0 })
}
