//! `versus server …`: fetch, list, start, stop, status, vars, snapshot, restore.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand};
use comfy_table::{Table, presets::NOTHING};

use crate::error::{Error, Result};
use crate::server::fetch::{self, FetchOptions};
use crate::server::sandbox::{self, Sandbox, SandboxInfo, SandboxSpec};
use crate::server::{Home, Source, process};

mod topology;
mod vars;

#[derive(Debug, Subcommand)]
pub(super) enum ServerCommand {
    /// Obtain a server build and register it: a vendor release (mysql-8.0.36, mysql-8.0 for the newest,
    /// percona-8.0.36-28, mariadb-10.6.21, ranges such as mysql-8.0.30..8.0.36 or mysql-5.7.40..), a Debian
    /// line (mariadb-10.5, mariadb-10.11, mariadb-11.8, mysql-9.7, or a point version such as
    /// mariadb-10.11.19; `vendor:` takes the vendor's instead), `system` or a directory (an existing
    /// install), or a binary tarball (.tar.gz, .tar.xz).
    Fetch {
        /// What to fetch.
        spec: String,
        /// Register under this name.
        #[arg(long)]
        name: Option<String>,
        /// Fetch again even if a build of that name exists.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        vendor: VendorArgs,
        /// Verify the download against this checksum (ALGO:hex, e.g. SHA256:…) when the vendor publishes none.
        #[arg(long, value_name = "ALGO:HEX")]
        checksum: Option<String>,
    },
    /// List what can be fetched: the releases of a vendor series (mysql-8.0, percona-8.0, mariadb-10.6 …),
    /// newest first with size and whether they are cached, or the point versions of a Debian line.
    Available {
        /// The series or Debian line.
        line: String,
        #[command(flatten)]
        vendor: VendorArgs,
    },
    /// The release catalog of the vendors' archives.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// List registered builds.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Start a sandbox of BUILD on 127.0.0.1 and leave it running.
    Start(StartArgs),
    /// Stop sandboxes (SIGTERM, then SIGKILL after --timeout).
    Stop {
        /// Sandbox names.
        names: Vec<String>,
        /// Stop every running sandbox.
        #[arg(long, conflicts_with = "names")]
        all: bool,
        /// Seconds to wait for a clean shutdown before SIGKILL.
        #[arg(long, default_value_t = 120)]
        timeout: u64,
    },
    /// Show sandboxes: version, state, pid, port, uptime.
    Status {
        /// Only this sandbox.
        name: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Wait until a primary's replicas have applied all it has (the catch-up time of each), then compare
    /// their tables with its (CHECKSUM TABLE); exit status 1 when a table differs.
    Verify {
        /// The primary's sandbox name.
        name: String,
        /// Seconds to wait for the replicas to catch up.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
    },
    /// Watch a primary's replicas: each second, each one's heartbeat lag, Seconds_Behind and
    /// transactions applied (a heartbeat row is written on the primary every 100 ms meanwhile).
    Lag {
        /// The primary's sandbox name.
        name: String,
        /// How many seconds to watch (Ctrl-C stops earlier).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        seconds: u64,
    },
    /// SHOW GLOBAL VARIABLES of a running sandbox.
    Vars {
        /// Sandbox name.
        name: String,
        /// Only variables whose name matches this SQL LIKE pattern (e.g. 'innodb_flush%').
        #[arg(long)]
        like: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Save the datadir of a stopped sandbox as a snapshot.
    Snapshot {
        /// Sandbox name.
        name: String,
        /// Snapshot name [default: the sandbox name].
        #[arg(long = "as")]
        snapshot: Option<String>,
    },
    /// Replace the datadir of a stopped sandbox with a snapshot, and start it again.
    Restore {
        /// Sandbox name.
        name: String,
        /// Snapshot name [default: the sandbox name].
        #[arg(long = "from")]
        snapshot: Option<String>,
        /// Leave it stopped after restoring.
        #[arg(long)]
        no_start: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum CatalogCommand {
    /// Refresh the catalog from the vendors' listings (MariaDB's REST API, Oracle's archive pages) into
    /// the versus cache; every known MySQL and MariaDB series unless some are named.
    Update {
        /// Series to refresh (mysql-8.0, mariadb-10.6 …).
        series: Vec<String>,
        /// A mirror with the vendors' layout [default: $VERSUS_MIRROR, else the vendors' sites].
        #[arg(long, value_name = "URL")]
        mirror: Option<String>,
    },
}

/// Where vendor releases come from.
#[derive(Debug, Args)]
pub(super) struct VendorArgs {
    /// A mirror with the vendors' layout [default: $VERSUS_MIRROR, else the vendors' sites].
    #[arg(long, value_name = "URL")]
    mirror: Option<String>,
    /// Use only the download cache; fail instead of downloading.
    #[arg(long)]
    offline: bool,
    /// Prefer minimal tarballs (no debug binaries or test suite; a tenth of the size) where there are some.
    #[arg(long)]
    minimal: bool,
}

#[derive(Debug, Args)]
pub(super) struct StartArgs {
    /// The build to run (see `versus server list`).
    build: String,
    /// Sandbox name [default: the build name].
    #[arg(long)]
    name: Option<String>,
    /// A base my.cnf whose options come first.
    #[arg(long, value_name = "FILE.cnf")]
    config: Option<PathBuf>,
    /// A server option on top of the config, as name=value or a bare flag name (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// TCP port on 127.0.0.1 [default: a free one].
    #[arg(long)]
    port: Option<u16>,
    /// Datadir [default: data/ in the sandbox directory]; must be empty or made by versus.
    #[arg(long)]
    datadir: Option<PathBuf>,
    /// Throw away the sandbox's existing datadir and initialise a new one.
    #[arg(long)]
    fresh: bool,
    #[command(flatten)]
    topology: topology::ReplicaArgs,
}

pub(super) fn run(home: &Home, cmd: ServerCommand) -> Result<i32> {
    match cmd {
        ServerCommand::Fetch { spec, name, force, vendor, checksum } => {
            let opts = FetchOptions {
                name,
                force,
                mirror: vendor.mirror,
                offline: vendor.offline,
                minimal: vendor.minimal,
                checksum,
            };
            // A build already registered is said so once, by the fetch ("… is already registered"), not
            // also "registered" here.
            let before: Vec<String> = home.builds().unwrap_or_default().into_iter().map(|b| b.name).collect();
            for b in fetch::fetch_all(home, &spec, &opts, &mut |l| eprintln!("{l}"))? {
                if opts.force || !before.contains(&b.name) {
                    println!("registered {} ({} {}) at {}", b.name, b.flavor, b.version_string, b.root.display());
                }
            }
        }
        ServerCommand::Available { line, vendor } => available(home, &line, vendor)?,
        ServerCommand::Catalog(CatalogCommand::Update { series, mirror }) => {
            let opts = FetchOptions { mirror, ..Default::default() };
            let updates = fetch::update_catalog(home, &series, &opts, &mut |l| eprintln!("{l}"))?;
            let entries: usize = updates.iter().map(|u| u.entries).sum();
            println!(
                "catalog updated: {} series, {entries} tarballs with checksums, in {}",
                updates.len(),
                fetch::learned_catalog(home).display()
            );
        }
        ServerCommand::List { json } => list(home, json)?,
        ServerCommand::Start(args) => start(home, args)?,
        ServerCommand::Stop { names, all, timeout } => stop(home, names, all, timeout)?,
        ServerCommand::Status { name, json } => status(home, name, json)?,
        ServerCommand::Verify { name, timeout } => return topology::verify(home, &name, timeout),
        ServerCommand::Lag { name, seconds } => topology::lag(home, &name, seconds)?,
        ServerCommand::Vars { name, like, json } => vars::vars(home, &name, like.as_deref(), json)?,
        ServerCommand::Snapshot { name, snapshot } => {
            let mut sb = open(home, &name)?;
            let _lock = lock_sandbox(home, &name)?;
            if let Some(s) = &snapshot {
                crate::owned::check_name("--as", s)?;
            }
            let dest = home.snapshots_dir().join(snapshot.as_deref().unwrap_or(&name));
            let bytes = sb.snapshot(&dest)?;
            println!("saved the datadir of {name} ({} MiB) as {}", bytes >> 20, dest.display());
        }
        ServerCommand::Restore { name, snapshot, no_start } => {
            let mut sb = open(home, &name)?;
            let _lock = lock_sandbox(home, &name)?;
            if let Some(s) = &snapshot {
                crate::owned::check_name("--from", s)?;
            }
            let src = home.snapshots_dir().join(snapshot.as_deref().unwrap_or(&name));
            sb.restore(&src)?;
            println!("restored {name} from {}", src.display());
            if !no_start {
                let t = sb.restart()?;
                println!("started {name} in {:.2} s (pid {}, port {})", t.as_secs_f64(), sb.pid(), sb.port());
            }
        }
    }
    Ok(0)
}

fn available(home: &Home, spec: &str, v: VendorArgs) -> Result<()> {
    // Debian lines and vendor series in the same columns, `-` where a value is not known.
    let offers = if fetch::is_vendor_spec(spec) {
        let opts = FetchOptions { mirror: v.mirror, offline: v.offline, minimal: v.minimal, ..Default::default() };
        fetch::available_releases(home, spec, &opts)?
    } else {
        fetch::available(home, spec)?
    };
    let mut t = table(&["RELEASE", "FILE", "SIZE", "CHECKSUM", "CACHED", "FETCHED"]);
    for o in &offers {
        let size = o.size.map(|s| format!("{} MB", s / 1_000_000)).unwrap_or_else(|| "-".into());
        let sum = match (&o.checksum, o.listed) {
            (Some(c), _) => c.split_once(':').map_or(c.as_str(), |(a, _)| a).to_string(),
            (None, true) => "vendor's".into(),
            (None, false) => "vendor's (name by pattern)".into(),
        };
        let yes = |b: bool| if b { "yes" } else { "-" };
        t.add_row(vec![o.release.clone(), o.file.clone(), size, sum, yes(o.cached).into(), yes(o.registered).into()]);
    }
    println!("{t}");
    Ok(())
}

fn list(home: &Home, json: bool) -> Result<()> {
    let builds = home.builds()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&builds).expect("builds serialise"));
        return Ok(());
    }
    if builds.is_empty() {
        println!("no builds registered; try `versus server fetch system` or `versus server fetch mariadb-11.8`");
        return Ok(());
    }
    let mut t = table(&["NAME", "FLAVOR", "VERSION", "PATH", "SIZE", "SOURCE"]);
    for b in builds {
        let source = match &b.source {
            Source::Apt { suite, package_version, .. } => format!("debian {suite} {package_version}"),
            Source::Path => "existing install".into(),
            Source::Tarball { file } => format!("tarball {}", file.display()),
            Source::Vendor { url, .. } => format!("vendor {url}"),
        };
        let size = if b.size_bytes == 0 { "-".to_string() } else { format!("{} MiB", b.size_bytes >> 20) };
        t.add_row(vec![b.name, b.flavor.to_string(), b.version_string, b.root.display().to_string(), size, source]);
    }
    println!("{t}");
    Ok(())
}

fn start(home: &Home, a: StartArgs) -> Result<()> {
    if let Some(n) = &a.name {
        crate::owned::check_name("--name", n)?;
    }
    let build = home.build(&a.build)?;
    let name = a.name.unwrap_or_else(|| build.name.clone());
    let dir = sandbox_dir(home, &name)?;
    let _lock = lock_sandbox(home, &name)?;
    if let Ok(info) = sandbox::read_info(&dir)
        && sandbox::is_our_server(&info)
    {
        return Err(Error::server(
            &name,
            format!(
                "is already running (pid {}, port {}); stop it with `versus server stop {name}` or choose --name",
                info.pid, info.port
            ),
        ));
    }
    if let Some(c) = &a.config
        && !c.is_file()
    {
        return Err(Error::option("--config", format!("{} is not a file", c.display())));
    }
    let mut spec = SandboxSpec::new(&name, build, &dir);
    spec.base_config = a.config;
    spec.overrides = a.set;
    spec.port = a.port;
    spec.datadir = a.datadir;
    spec.fresh = a.fresh;
    spec.detached = true;
    if a.topology.asked() {
        return topology::start(home, spec, a.topology);
    }
    crate::server::replication::forget(&dir)?;
    let sb = Sandbox::start(spec)?;
    println!("started {name}: {} in {:.2} s", sb.version(), sb.ready_after().as_secs_f64());
    for a in sb.adjusted() {
        eprintln!("warning: the server does not run as configured: {a}");
    }
    println!("  pid {}  port 127.0.0.1:{}  socket {}", sb.pid(), sb.port(), sb.socket().display());
    println!("  my.cnf {}  error log {}", sb.info().cnf.display(), sb.error_log().display());
    println!("connect with:");
    for line in sb.connect_hint().lines() {
        println!("  {line}");
    }
    println!("stop with: versus server stop {}", crate::shell::quote(&name));
    sb.detach();
    Ok(())
}

/// Takes sandbox `name`'s lock (`sandboxes/NAME.lock`): one command at a time starts, stops, snapshots
/// or restores a sandbox, so that two never initialise or replace one datadir together.
fn lock_sandbox(home: &Home, name: &str) -> Result<crate::lockfile::Held> {
    let dir = home.sandboxes_dir();
    crate::owned::create_dir_all(&dir)?;
    crate::lockfile::take(&dir.join(format!("{name}.lock")), |holder| {
        Error::server(
            name,
            format!("another command is working on this sandbox ({holder}); run this one when it is done"),
        )
    })
}

fn sandboxes(home: &Home) -> Result<Vec<SandboxInfo>> {
    let dir = home.sandboxes_dir();
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            // A link to a place versus did not make is no sandbox of versus's.
            if crate::owned::check_dir(&e.path()).is_ok()
                && let Ok(info) = sandbox::read_info(&e.path())
            {
                out.push(info);
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The directory of sandbox `name`: a valid name, and not a link to a place versus did not make.
fn sandbox_dir(home: &Home, name: &str) -> Result<PathBuf> {
    crate::owned::check_name("NAME", name)?;
    let dir = home.sandboxes_dir().join(name);
    crate::owned::check_dir(&dir)?;
    Ok(dir)
}

fn open(home: &Home, name: &str) -> Result<Sandbox> {
    let dir = sandbox_dir(home, name)?;
    let info = sandbox::read_info(&dir).map_err(|_| unknown_sandbox(home, name))?;
    Sandbox::open(&dir, home.build(&info.build)?)
}

fn unknown_sandbox(home: &Home, name: &str) -> Error {
    let known: Vec<String> = sandboxes(home).unwrap_or_default().into_iter().map(|i| i.name).collect();
    let hint = if known.is_empty() {
        "none exist; start one with `versus server start BUILD`".to_string()
    } else {
        format!("known: {}", known.join(", "))
    };
    Error::server(name, format!("no such sandbox ({hint})"))
}

fn stop(home: &Home, names: Vec<String>, all: bool, timeout: u64) -> Result<()> {
    let targets: Vec<SandboxInfo> = if all {
        sandboxes(home)?.into_iter().filter(sandbox::is_our_server).collect()
    } else if names.is_empty() {
        return Err(Error::option("stop", "name the sandboxes to stop, or pass --all"));
    } else {
        names
            .iter()
            .map(|n| {
                sandbox_dir(home, n).and_then(|dir| sandbox::read_info(&dir).map_err(|_| unknown_sandbox(home, n)))
            })
            .collect::<Result<_>>()?
    };
    for info in targets {
        topology::stop_replicas(home, &info, timeout)?;
        let _lock = lock_sandbox(home, &info.name)?;
        if !sandbox::is_our_server(&info) {
            println!("{}: not running", info.name);
            continue;
        }
        let outcome = process::terminate(info.pid, None, Duration::from_secs(timeout));
        let how = match outcome {
            process::StopOutcome::Killed => "killed after the timeout",
            process::StopOutcome::Terminated => "stopped",
            process::StopOutcome::NotRunning => "not running",
        };
        println!("{}: {how} (pid {})", info.name, info.pid);
    }
    Ok(())
}

fn status(home: &Home, name: Option<String>, json: bool) -> Result<()> {
    let mut infos = sandboxes(home)?;
    if let Some(n) = &name {
        infos.retain(|i| &i.name == n);
        if infos.is_empty() {
            return Err(unknown_sandbox(home, n));
        }
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let rows: Vec<(SandboxInfo, bool)> = infos
        .into_iter()
        .map(|i| {
            let up = sandbox::is_our_server(&i);
            (i, up)
        })
        .collect();
    if json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(i, up)| {
                let mut v = serde_json::to_value(i).expect("info serialises");
                v["password"] = serde_json::Value::Null;
                v["running"] = (*up).into();
                v["uptime_s"] = if *up { now.saturating_sub(i.started_at).into() } else { serde_json::Value::Null };
                if name.is_some() {
                    v["replication"] = topology::status_json(home, i);
                }
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        return Ok(());
    }
    if rows.is_empty() {
        println!("no sandboxes; start one with `versus server start BUILD`");
        return Ok(());
    }
    let mut t = table(&["NAME", "BUILD", "VERSION", "STATE", "PID", "PORT", "UPTIME", "SOCKET"]);
    for (i, up) in rows {
        let (state, pid, uptime) = if up {
            ("running", i.pid.to_string(), human_duration(now.saturating_sub(i.started_at)))
        } else {
            ("stopped", "-".into(), "-".into())
        };
        t.add_row(vec![
            i.name,
            i.build,
            i.version,
            state.into(),
            pid,
            i.port.to_string(),
            uptime,
            i.socket.display().to_string(),
        ]);
    }
    println!("{t}");
    if let Some(n) = &name {
        topology::print_status(home, n)?;
    }
    Ok(())
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(NOTHING).set_header(header.to_vec());
    t
}

fn human_duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(125), "2m05s");
        assert_eq!(human_duration(7322), "2h02m");
    }
}
