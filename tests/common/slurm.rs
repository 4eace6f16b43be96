//! A throwaway single-node Slurm cluster for tests: munged with a key of its own, slurmctld and slurmd
//! with a localhost slurm.conf, all in one temp dir on free ports. Every command of the cluster needs
//! `SLURM_CONF` (see [`TempSlurm::conf`]). Dropping it cancels its jobs and stops the three daemons by
//! the PIDs in their pid files, also when the test fails.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The programs the cluster needs.
const PROGRAMS: [&str; 8] = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo"];

/// A running test cluster.
pub struct TempSlurm {
    dir: tempfile::TempDir,
    /// The node's name (the short host name).
    pub node: String,
}

/// `program` on PATH or in /usr/sbin.
fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn run(dir: &Path, program: &str, args: &[&str], conf: Option<&Path>) {
    let exe = find(program).unwrap_or_else(|| panic!("{program} not found"));
    let mut c = Command::new(exe);
    c.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    if let Some(conf) = conf {
        c.env("SLURM_CONF", conf);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{program} {args:?} failed: {}\n{}", String::from_utf8_lossy(&out.stderr), logs(dir));
}

/// The tails of the daemons' logs, for failure messages.
pub fn logs(dir: &Path) -> String {
    let mut s = String::new();
    for f in ["munged.log", "slurmctld.log", "slurmd.log"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        s += &format!("--- {f}\n{}\n", lines[lines.len().saturating_sub(15)..].join("\n"));
    }
    s
}

impl TempSlurm {
    /// Starts a cluster, or returns `None` (after saying why) when Slurm or munge is not installed.
    pub fn start_if_installed() -> Option<TempSlurm> {
        let missing: Vec<&str> = PROGRAMS.iter().copied().filter(|p| find(p).is_none()).collect();
        if !missing.is_empty() {
            eprintln!(
                "SKIPPED: the Slurm test needs {} (apt-get install slurmctld slurmd slurm-client munge, \
                 which scripts/install-deps.sh --tests does)",
                missing.join(", ")
            );
            return None;
        }
        Some(TempSlurm::start())
    }

    fn start() -> TempSlurm {
        let dir = tempfile::Builder::new().prefix("versus-slurm-").tempdir().unwrap();
        let d = &dir.path().to_path_buf();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
        let node = host.split('.').next().unwrap().to_string();
        let user = nix::unistd::User::from_uid(nix::unistd::geteuid()).unwrap().unwrap().name;
        let cluster = TempSlurm { dir, node };
        // munged with a key of its own, owned by us with mode 0400 as munged requires.
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key).unwrap();
        std::fs::write(d.join("munge.key"), key).unwrap();
        std::fs::set_permissions(d.join("munge.key"), std::os::unix::fs::PermissionsExt::from_mode(0o400)).unwrap();
        let p = |f: &str| d.join(f).display().to_string();
        run(
            d,
            "munged",
            &[
                "--force",
                &format!("--socket={}", p("munge.sock")),
                &format!("--key-file={}", p("munge.key")),
                &format!("--log-file={}", p("munged.log")),
                &format!("--pid-file={}", p("munged.pid")),
                &format!("--seed-file={}", p("munged.seed")),
            ],
            None,
        );
        for sub in ["state", "spool"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        let (ctld, slurmd) = (free_port(), free_port());
        let node = &cluster.node;
        let conf = format!(
            "ClusterName=versustest\nSlurmctldHost={node}\nSlurmUser={user}\nSlurmdUser={user}\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={sock}\n\
             StateSaveLocation={state}\nSlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={ctld_pid}\nSlurmdPidFile={slurmd_pid}\n\
             SlurmctldLogFile={ctld_log}\nSlurmdLogFile={slurmd_log}\n\
             SlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nReturnToService=2\nMpiDefault=none\n\
             MinJobAge=600\nKillWait=5\n\
             NodeName={node} CPUs=2 RealMemory=2000\n\
             PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP\n",
            sock = p("munge.sock"),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("slurmctld.log"),
            slurmd_log = p("slurmd.log"),
        );
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        let c = cluster.conf();
        run(d, "slurmctld", &["-f", c.to_str().unwrap(), "-i"], Some(&c));
        run(d, "slurmd", &["-f", c.to_str().unwrap()], Some(&c));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = cluster.command("sinfo").args(["-h", "-o", "%T"]).output().unwrap();
            if String::from_utf8_lossy(&out.stdout).trim() == "idle" {
                break;
            }
            assert!(Instant::now() < deadline, "the test node did not become idle in 60 s\n{}", logs(d));
            std::thread::sleep(Duration::from_millis(300));
        }
        cluster
    }

    /// The cluster's slurm.conf (the value of `SLURM_CONF`).
    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// A Slurm client command (`squeue`, `scancel` …) pointed at this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(find(program).unwrap());
        c.env("SLURM_CONF", self.conf()).stdin(Stdio::null());
        c
    }

    /// The tails of the daemons' logs.
    pub fn logs(&self) -> String {
        logs(self.dir.path())
    }

    fn pid(&self, file: &str) -> Option<Pid> {
        let text = std::fs::read_to_string(self.dir.path().join(file)).ok()?;
        Some(Pid::from_raw(text.trim().parse().ok()?))
    }
}

/// SIGTERM to `pid`, SIGKILL after 15 s.
fn stop(pid: Pid) {
    let _ = kill(pid, Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(15);
    while kill(pid, None).is_ok() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    if kill(pid, None).is_ok() {
        let _ = kill(pid, Signal::SIGKILL);
    }
}

impl Drop for TempSlurm {
    fn drop(&mut self) {
        // Jobs first, while slurmd can still end their processes.
        let user = nix::unistd::User::from_uid(nix::unistd::geteuid()).ok().flatten().map(|u| u.name);
        if let Some(user) = user {
            let _ = self.command("scancel").args(["--full", "--signal=KILL", "-u", &user]).output();
            let _ = self.command("scancel").args(["-u", &user]).output();
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                let q = self.command("squeue").args(["-h", "-o", "%i"]).output();
                if q.map(|o| !o.status.success() || o.stdout.is_empty()).unwrap_or(true) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        for file in ["slurmd.pid", "slurmctld.pid", "munged.pid"] {
            if let Some(pid) = self.pid(file) {
                stop(pid);
            }
        }
    }
}
