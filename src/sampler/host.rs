//! The machine: facts recorded with every experiment (CPU, memory, kernel, OS, the datadir's
//! filesystem) and whole-host CPU time from `/proc/stat`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::process::ticks_per_second;
use crate::error::{Error, Result};

/// Facts about the machine, recorded with each experiment. Every field is best effort: `None` when
/// the source could not be read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HostFacts {
    /// Host name.
    pub hostname: Option<String>,
    /// CPU model name (`/proc/cpuinfo`).
    pub cpu_model: Option<String>,
    /// Logical CPUs (hardware threads).
    pub logical_cpus: Option<u32>,
    /// Physical cores, when `/proc/cpuinfo` tells them apart.
    pub physical_cores: Option<u32>,
    /// Total memory, bytes.
    pub memory_bytes: Option<u64>,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// Operating system (`PRETTY_NAME` of `/etc/os-release`).
    pub os: Option<String>,
    /// The filesystem holding the server's datadir.
    pub datadir: Option<DiskFacts>,
}

/// The filesystem a path lives on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskFacts {
    /// The path asked about (canonical where it exists).
    pub path: PathBuf,
    /// The mount point holding it.
    pub mount_point: PathBuf,
    /// Filesystem type (`ext4`, `xfs`, `tmpfs` …).
    pub fs_type: String,
    /// The mounted device or source (`/dev/nvme0n1p2`).
    pub device: String,
    /// Mount options (`rw,relatime`).
    pub options: String,
    /// The disk's model (`/sys/class/block/DISK/device/model`), when the device is a disk that says.
    pub model: Option<String>,
    /// Whether the disk is rotational (`queue/rotational`), when known.
    pub rotational: Option<bool>,
}

impl HostFacts {
    /// Collects the facts of this machine; `datadir` adds the filesystem it lives on.
    pub fn collect(datadir: Option<&Path>) -> HostFacts {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let cpu = read("/proc/cpuinfo").map(|t| parse_cpuinfo(&t));
        let logical_cpus = cpu
            .as_ref()
            .and_then(|c| (c.logical > 0).then_some(c.logical))
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get() as u32));
        HostFacts {
            hostname: read("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()),
            cpu_model: cpu.as_ref().and_then(|c| c.model.clone()),
            logical_cpus,
            physical_cores: cpu.as_ref().and_then(|c| c.physical_cores),
            memory_bytes: read("/proc/meminfo").and_then(|t| parse_meminfo(&t)),
            kernel: read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()),
            os: read("/etc/os-release").and_then(|t| parse_os_release(&t)),
            datadir: datadir.and_then(disk_facts),
        }
    }
}

/// What `/proc/cpuinfo` says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuInfo {
    /// `model name` of the first CPU.
    pub model: Option<String>,
    /// Number of `processor` entries.
    pub logical: u32,
    /// Distinct (`physical id`, `core id`) pairs, when present.
    pub physical_cores: Option<u32>,
}

/// Parses `/proc/cpuinfo`.
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut cores = std::collections::BTreeSet::new();
    let mut physical: Option<String> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => {
                info.logical += 1;
                physical = None;
            }
            "model name" if info.model.is_none() => info.model = Some(value.to_string()),
            "physical id" => physical = Some(value.to_string()),
            "core id" => {
                cores.insert((physical.clone().unwrap_or_default(), value.to_string()));
            }
            _ => {}
        }
    }
    info.physical_cores = (!cores.is_empty()).then_some(cores.len() as u32);
    info
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().next()?.parse().ok()?;
    Some(kb * 1024)
}

/// The OS name from `/etc/os-release`: `PRETTY_NAME`, else `NAME VERSION_ID`.
pub fn parse_os_release(text: &str) -> Option<String> {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let v = l.trim().strip_prefix(key)?.strip_prefix('=')?;
            Some(v.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        })
    };
    get("PRETTY_NAME").filter(|s| !s.is_empty()).or_else(|| match (get("NAME"), get("VERSION_ID")) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (n, _) => n,
    })
}

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// Filesystem type.
    pub fs_type: String,
    /// Device or source.
    pub source: String,
    /// Per-mount options.
    pub options: String,
}

/// Undoes the octal escapes of mountinfo paths (`\040` is a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b))
            && let Ok(v) = u8::from_str_radix(&field[i + 1..i + 4], 8)
        {
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `/proc/self/mountinfo`; malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            Some(Mount {
                mount_point: PathBuf::from(unescape(left.get(4)?)),
                options: left.get(5)?.to_string(),
                fs_type: right.next()?.to_string(),
                source: unescape(right.next()?),
            })
        })
        .collect()
}

/// The mount holding `path`: the longest mount point that is a prefix of it (by path components);
/// of equal ones the last, which is the one mounted on top.
pub fn mount_for<'a>(path: &Path, mounts: &'a [Mount]) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point)
            && best.is_none_or(|b| m.mount_point.components().count() >= b.mount_point.components().count())
        {
            best = Some(m);
        }
    }
    best
}

/// The filesystem of `path`, resolved through symlinks; a path that does not exist yet is looked up
/// by its nearest existing ancestor.
pub fn disk_facts(path: &Path) -> Option<DiskFacts> {
    let absolute = std::path::absolute(path).ok()?;
    let mut existing = absolute.as_path();
    let resolved = loop {
        if let Ok(p) = existing.canonicalize() {
            let rest = absolute.strip_prefix(existing).ok()?;
            break if rest.as_os_str().is_empty() { p } else { p.join(rest) };
        }
        existing = existing.parent()?;
    };
    let mounts = parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").ok()?);
    let m = mount_for(&resolved, &mounts)?;
    let disk = disk_dir(&m.source);
    let read = |name: &str| {
        disk.as_ref().and_then(|d| std::fs::read_to_string(d.join(name)).ok()).map(|s| s.trim().to_string())
    };
    Some(DiskFacts {
        path: resolved.clone(),
        mount_point: m.mount_point.clone(),
        fs_type: m.fs_type.clone(),
        device: m.source.clone(),
        options: m.options.clone(),
        model: read("device/model").filter(|s| !s.is_empty()),
        rotational: read("queue/rotational").map(|r| r == "1"),
    })
}

/// The sysfs directory of the whole disk behind a mounted device (`/dev/nvme0n1p2` → `…/nvme0n1`).
fn disk_dir(device: &str) -> Option<PathBuf> {
    let name = Path::new(device.strip_prefix("/dev/")?).file_name()?;
    let dir = Path::new("/sys/class/block").join(name).canonicalize().ok()?;
    if dir.join("partition").exists() { dir.parent().map(Path::to_path_buf) } else { Some(dir) }
}

/// What makes two hosts comparable: the hardware and kernel facts of [`HostFacts`] without the names
/// that differ between identical machines (host name, device names, paths). Hosts with equal
/// fingerprints form one *host class*; results are compared only within a class.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Fingerprint {
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// Logical CPUs.
    pub logical_cpus: Option<u32>,
    /// Physical cores.
    pub physical_cores: Option<u32>,
    /// Memory rounded to whole GiB (the exact total varies with firmware and kernel reservations).
    pub memory_gib: Option<u64>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// The datadir's storage: disk model, `ssd`/`hdd`, filesystem (`Samsung PM9A3; ssd; xfs`).
    pub storage: Option<String>,
}

impl Fingerprint {
    /// The fingerprint of a host described by `facts`.
    pub fn of(facts: &HostFacts) -> Fingerprint {
        let storage = facts.datadir.as_ref().map(|d| {
            let kind = match d.rotational {
                Some(true) => "hdd",
                Some(false) => "ssd",
                None => "unknown",
            };
            format!("{}; {kind}; {}", d.model.as_deref().unwrap_or("unknown"), d.fs_type)
        });
        Fingerprint {
            cpu_model: facts.cpu_model.as_ref().map(|m| m.split_whitespace().collect::<Vec<_>>().join(" ")),
            logical_cpus: facts.logical_cpus,
            physical_cores: facts.physical_cores,
            memory_gib: facts.memory_bytes.map(|b| (b + (1 << 29)) >> 30),
            kernel: facts.kernel.clone(),
            storage,
        }
    }

    /// The host class: `hc-` and 12 hex digits of the SHA-256 of the fingerprint's JSON. Equal for
    /// equal fingerprints on every machine and versus version.
    pub fn class(&self) -> String {
        use sha2::{Digest, Sha256};
        let json = serde_json::to_string(self).unwrap_or_default();
        let digest = Sha256::digest(json.as_bytes());
        let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        format!("hc-{hex}")
    }

    /// One line for messages: `AMD EPYC 7B13, 2 CPUs, 24 GiB, kernel 6.1.0, vda; ssd; ext4`.
    pub fn describe(&self) -> String {
        let unknown = || "?".to_string();
        format!(
            "{}, {} CPUs, {} GiB, kernel {}, {}",
            self.cpu_model.clone().unwrap_or_else(unknown),
            self.logical_cpus.map_or_else(unknown, |n| n.to_string()),
            self.memory_gib.map_or_else(unknown, |n| n.to_string()),
            self.kernel.clone().unwrap_or_else(unknown),
            self.storage.clone().unwrap_or_else(unknown)
        )
    }
}

/// This host's fingerprint, with the storage that holds `datadir` (the current directory if `None`).
pub fn fingerprint(datadir: Option<&Path>) -> Fingerprint {
    Fingerprint::of(&HostFacts::collect(Some(datadir.unwrap_or(Path::new(".")))))
}

/// Whole-machine CPU time, from the `cpu` line of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCpu {
    /// When it was read.
    pub taken: Instant,
    /// All CPU time of all CPUs (user, nice, system, idle, iowait, irq, softirq, steal; guest time is
    /// already inside user).
    pub total_ticks: u64,
    /// Idle time.
    pub idle_ticks: u64,
    /// Time idle while I/O was outstanding.
    pub iowait_ticks: u64,
    /// Time stolen by the hypervisor.
    pub steal_ticks: u64,
    /// Context switches of the whole machine (the `ctxt` line).
    pub ctxt_switches: u64,
}

/// Parses `/proc/stat`.
pub fn parse_proc_stat(text: &str) -> Option<HostCpu> {
    let cpu = text.lines().find_map(|l| l.strip_prefix("cpu "))?;
    let mut host = cpu_times(cpu)?;
    host.ctxt_switches = text.lines().find_map(|l| l.strip_prefix("ctxt ")?.trim().parse().ok()).unwrap_or(0);
    Some(host)
}

/// Parses the `cpuN` lines of `/proc/stat` for the CPUs `cpus` and adds them up (no context switches,
/// which are counted for the whole machine only); `None` when one of them is missing.
pub fn parse_proc_stat_of(text: &str, cpus: &[usize]) -> Option<HostCpu> {
    let mut sum = HostCpu { taken: Instant::now(), ..HostCpu::zero() };
    for n in cpus {
        let prefix = format!("cpu{n} ");
        let one = cpu_times(text.lines().find_map(|l| l.strip_prefix(prefix.as_str()))?)?;
        sum.total_ticks += one.total_ticks;
        sum.idle_ticks += one.idle_ticks;
        sum.iowait_ticks += one.iowait_ticks;
        sum.steal_ticks += one.steal_ticks;
    }
    (!cpus.is_empty()).then_some(sum)
}

/// The times of one `cpu` line after its name.
fn cpu_times(fields: &str) -> Option<HostCpu> {
    let v: Vec<u64> = fields.split_whitespace().map_while(|f| f.parse().ok()).collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    if v.len() < 4 {
        return None;
    }
    Some(HostCpu {
        taken: Instant::now(),
        total_ticks: (0..8).map(at).sum(),
        idle_ticks: at(3),
        iowait_ticks: at(4),
        steal_ticks: at(7),
        ctxt_switches: 0,
    })
}

impl HostCpu {
    fn zero() -> HostCpu {
        HostCpu {
            taken: Instant::now(),
            total_ticks: 0,
            idle_ticks: 0,
            iowait_ticks: 0,
            steal_ticks: 0,
            ctxt_switches: 0,
        }
    }

    /// Reads the times of the CPUs `cpus` from `/proc/stat`, added up.
    pub fn read_of(cpus: &[usize]) -> Result<HostCpu> {
        let text = std::fs::read_to_string("/proc/stat")
            .map_err(|e| Error::file("/proc/stat", format!("cannot read host CPU statistics: {e}")))?;
        parse_proc_stat_of(&text, cpus).ok_or_else(|| Error::file("/proc/stat", "cannot parse the CPUs' statistics"))
    }

    /// Reads `/proc/stat`.
    pub fn read() -> Result<HostCpu> {
        let text = std::fs::read_to_string("/proc/stat")
            .map_err(|e| Error::file("/proc/stat", format!("cannot read host CPU statistics: {e}")))?;
        parse_proc_stat(&text).ok_or_else(|| Error::file("/proc/stat", "cannot parse the host CPU statistics"))
    }

    /// What changed from `self` to `later`.
    pub fn delta_to(&self, later: &HostCpu) -> HostCpuDelta {
        HostCpuDelta {
            total_ticks: later.total_ticks.saturating_sub(self.total_ticks),
            idle_ticks: later.idle_ticks.saturating_sub(self.idle_ticks),
            iowait_ticks: later.iowait_ticks.saturating_sub(self.iowait_ticks),
            steal_ticks: later.steal_ticks.saturating_sub(self.steal_ticks),
            ctxt_switches: later.ctxt_switches.saturating_sub(self.ctxt_switches),
            ticks_per_second: ticks_per_second(),
        }
    }
}

/// Host CPU time over a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostCpuDelta {
    /// All CPU time of all CPUs, ticks.
    pub total_ticks: u64,
    /// Idle, ticks.
    pub idle_ticks: u64,
    /// I/O wait, ticks.
    pub iowait_ticks: u64,
    /// Steal, ticks.
    pub steal_ticks: u64,
    /// Context switches of the whole machine.
    pub ctxt_switches: u64,
    /// Clock ticks per second.
    pub ticks_per_second: u64,
}

impl HostCpuDelta {
    /// All CPU time of all CPUs, µs.
    pub fn total_us(&self) -> f64 {
        self.total_ticks as f64 * 1e6 / self.ticks_per_second.max(1) as f64
    }

    /// Fraction (0–1) of all CPU time that was busy (not idle and not I/O wait).
    pub fn busy_share(&self) -> Option<f64> {
        let busy = self.total_ticks.saturating_sub(self.idle_ticks + self.iowait_ticks);
        (self.total_ticks > 0).then(|| busy as f64 / self.total_ticks as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(host: &str, device: &str, memory: u64) -> HostFacts {
        HostFacts {
            hostname: Some(host.into()),
            cpu_model: Some("AMD EPYC  7B13 64-Core Processor".into()),
            logical_cpus: Some(2),
            physical_cores: Some(1),
            memory_bytes: Some(memory),
            kernel: Some("6.1.0-28-cloud-amd64".into()),
            os: Some("Debian GNU/Linux 12 (bookworm)".into()),
            datadir: Some(DiskFacts {
                path: format!("/data/{host}").into(),
                mount_point: "/data".into(),
                fs_type: "xfs".into(),
                device: device.into(),
                options: "rw".into(),
                model: Some("PM9A3".into()),
                rotational: Some(false),
            }),
        }
    }

    #[test]
    fn identical_machines_share_a_class_and_different_ones_do_not() {
        let a = Fingerprint::of(&facts("bench1", "/dev/nvme0n1p2", (24 << 30) - (300 << 20)));
        let b = Fingerprint::of(&facts("bench2", "/dev/nvme1n1p1", (24 << 30) + (100 << 20)));
        assert_eq!(a, b);
        assert_eq!(a.class(), b.class());
        assert!(a.class().starts_with("hc-") && a.class().len() == 15, "{}", a.class());
        assert_eq!(a.memory_gib, Some(24));
        assert_eq!(
            a.describe(),
            "AMD EPYC 7B13 64-Core Processor, 2 CPUs, 24 GiB, kernel 6.1.0-28-cloud-amd64, PM9A3; ssd; xfs"
        );

        let mut other = facts("bench3", "/dev/sda1", 24 << 30);
        other.kernel = Some("6.12.9".into());
        assert_ne!(Fingerprint::of(&other).class(), a.class());
        let mut hdd = facts("bench4", "/dev/sda1", 24 << 30);
        hdd.datadir.as_mut().unwrap().rotational = Some(true);
        assert_ne!(Fingerprint::of(&hdd).class(), a.class());
        // Stored before fingerprints existed: the facts still give a (different) class.
        let old: HostFacts = serde_json::from_str(r#"{"cpu_model":"x","datadir":{"fs_type":"ext4"}}"#).unwrap();
        assert_eq!(Fingerprint::of(&old).storage.as_deref(), Some("unknown; unknown; ext4"));
    }

    #[test]
    fn this_host_has_a_fingerprint() {
        let f = fingerprint(None);
        assert!(f.logical_cpus.is_some_and(|n| n > 0), "{f:?}");
        assert!(f.storage.is_some(), "{f:?}");
        assert_eq!(f.class(), fingerprint(None).class());
    }

    #[test]
    fn cpuinfo_model_and_cores() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6230\n\
                    physical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6230\n\
                    physical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 2\nphysical id\t: 0\ncore id\t\t: 1\n\n\
                    processor\t: 3\nphysical id\t: 1\ncore id\t\t: 0\n";
        let c = parse_cpuinfo(text);
        assert_eq!(c.model.as_deref(), Some("Intel(R) Xeon(R) Gold 6230"));
        assert_eq!(c.logical, 4);
        assert_eq!(c.physical_cores, Some(3));
        // ARM style: no model name, no core ids.
        let c = parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\n");
        assert_eq!((c.model, c.logical, c.physical_cores), (None, 2, None));
    }

    #[test]
    fn meminfo_and_os_release() {
        assert_eq!(parse_meminfo("MemTotal:       16318356 kB\nMemFree: 1 kB\n"), Some(16_318_356 * 1024));
        assert_eq!(parse_meminfo("MemFree: 1 kB\n"), None);
        let os = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
        assert_eq!(parse_os_release(os).as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
        assert_eq!(parse_os_release("NAME=Alpine\nVERSION_ID=3.20.1\n").as_deref(), Some("Alpine 3.20.1"));
        assert_eq!(parse_os_release(""), None);
    }

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
40 27 259:1 / /data rw,noatime shared:5 - xfs /dev/nvme0n1p1 rw,attr2
41 40 259:2 / /data/my\\040disk rw,noatime - ext4 /dev/nvme1n1 rw
42 27 0:50 / /database rw - tmpfs tmpfs rw,size=1g
43 40 0:51 / /data rw - btrfs /dev/sdb rw
";

    #[test]
    fn mountinfo_longest_prefix_wins() {
        let mounts = parse_mountinfo(MOUNTINFO);
        assert_eq!(mounts.len(), 6);
        assert_eq!(mounts[3].mount_point, Path::new("/data/my disk"));
        assert_eq!(mounts[2].fs_type, "xfs");
        assert_eq!(mounts[2].source, "/dev/nvme0n1p1");
        let find = |p: &str| mount_for(Path::new(p), &mounts).map(|m| (m.fs_type.as_str(), m.source.as_str()));
        assert_eq!(find("/data/my disk/mysql"), Some(("ext4", "/dev/nvme1n1")));
        // /data is mounted twice: the later mount is the visible one.
        assert_eq!(find("/data/other"), Some(("btrfs", "/dev/sdb")));
        // Prefixes are matched by component: /database is not under /data.
        assert_eq!(find("/database/x"), Some(("tmpfs", "tmpfs")));
        assert_eq!(find("/home/u"), Some(("ext4", "/dev/vda")));
        assert_eq!(find("relative"), None);
    }

    #[test]
    fn unescapes_octal() {
        assert_eq!(unescape("a\\040b\\011c\\134d"), "a b\tc\\d");
        assert_eq!(unescape("trailing\\04"), "trailing\\04");
    }

    #[test]
    fn proc_stat_totals() {
        let text = "cpu  44789 10 11948 115890 763 0 106 39 5 0\ncpu0 1 2 3 4\nctxt 817167\nbtime 1\n";
        let h = parse_proc_stat(text).unwrap();
        assert_eq!(h.total_ticks, 44789 + 10 + 11948 + 115890 + 763 + 106 + 39);
        assert_eq!((h.idle_ticks, h.iowait_ticks, h.steal_ticks, h.ctxt_switches), (115890, 763, 39, 817167));
        let mut later = h;
        later.total_ticks += 200;
        later.idle_ticks += 50;
        let d = h.delta_to(&later);
        assert_eq!(d.busy_share(), Some(0.75));
        assert_eq!(d.total_us(), 200.0 * 1e6 / ticks_per_second() as f64);
        assert!(parse_proc_stat("intr 1\n").is_none());
    }

    #[test]
    fn proc_stat_of_some_cpus() {
        let text = "cpu  9 9 9 9\ncpu0 1 0 2 10 1\ncpu1 3 0 0 5 0 0 0 2\ncpu10 100 0 0 0\nctxt 5\n";
        let h = parse_proc_stat_of(text, &[0, 1]).unwrap();
        assert_eq!((h.total_ticks, h.idle_ticks, h.iowait_ticks, h.steal_ticks), (24, 15, 1, 2));
        assert_eq!(parse_proc_stat_of(text, &[1]).unwrap().total_ticks, 10, "cpu1 is not cpu10");
        assert!(parse_proc_stat_of(text, &[2]).is_none());
        assert!(parse_proc_stat_of(text, &[]).is_none());
    }

    #[test]
    fn collects_facts_of_this_machine() {
        let dir = tempfile::tempdir().unwrap();
        let f = HostFacts::collect(Some(&dir.path().join("not/yet/created")));
        assert!(f.logical_cpus.unwrap_or(0) >= 1, "{f:?}");
        assert!(f.memory_bytes.unwrap_or(0) > 0, "{f:?}");
        assert!(f.kernel.as_deref().is_some_and(|k| !k.is_empty()), "{f:?}");
        let existing = HostFacts::collect(Some(dir.path())).datadir.expect("the temp dir is on some mount");
        assert_eq!(existing.path, dir.path().canonicalize().unwrap());
        let d = f.datadir.as_ref().expect("the temp dir is on some mount");
        assert!(d.path.ends_with("not/yet/created"), "{d:?}");
        assert!(d.path.starts_with(&d.mount_point), "{d:?}");
        assert!(!d.fs_type.is_empty());
        // The JSON form loads back, and unknown or missing fields are tolerated.
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(serde_json::from_str::<HostFacts>(&json).unwrap(), f);
        assert_eq!(serde_json::from_str::<HostFacts>("{\"future\": 1}").unwrap(), HostFacts::default());
        let cpu = HostCpu::read().unwrap();
        assert!(cpu.total_ticks > 0);
    }
}
