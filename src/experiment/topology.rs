//! A target's replication topology in an experiment file: its `replication` table (on the target or
//! on its config), what the plan keeps of it, and why a build cannot run it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::server::Build;
use crate::server::replication::TopologySpec;
use crate::server::sandbox::SandboxSpec;

/// `replication = { replicas = 2, semi_sync = true, replica_set = { … }, delay = [0, 3] }`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicationDef {
    /// Replicas beside the primary, 1 to 9.
    pub replicas: u32,
    /// Commits on the primary wait for a replica's acknowledgement.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub semi_sync: bool,
    /// Server options of the replicas only, after the target's `set` (appliers' threads, for example).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub replica_set: toml::Table,
    /// Seconds each replica holds transactions back (`MASTER_DELAY`/`SOURCE_DELAY`), by replica.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delay: Vec<u32>,
    /// The registered build the replicas run, when not the primary's (of its family, not older).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

/// A target's topology as the plan keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replication {
    /// Replicas beside the primary.
    pub replicas: usize,
    /// Semi-synchronous commits.
    pub semi_sync: bool,
    /// Each replica's delay in seconds (missing: 0).
    pub delays: Vec<u32>,
    /// The replicas' own options, `name=value` or a bare name.
    pub replica_overrides: Vec<String>,
    /// The build the replicas run, when not the primary's.
    pub replica_build: Option<String>,
}

impl Replication {
    /// The plan's form of `def`, with its `replica_set` as `name=value` options.
    pub fn of(def: &ReplicationDef, replica_overrides: Vec<String>) -> Replication {
        Replication {
            replicas: def.replicas as usize,
            semi_sync: def.semi_sync,
            delays: def.delay.clone(),
            replica_overrides,
            replica_build: def.build.clone(),
        }
    }

    /// The topology of a primary started from `primary`, its members' data restored by the caller; the
    /// replicas run `replica_build` (the build [`Replication::replica_build`] names, resolved by the
    /// caller) or the primary's.
    pub fn spec(&self, primary: SandboxSpec, replica_build: Option<Build>) -> TopologySpec {
        let mut t = TopologySpec::new(primary, self.replicas);
        t.replica_build = replica_build;
        t.semi_sync = self.semi_sync;
        t.delays = self.delays.clone();
        t.replica_overrides = self.replica_overrides.clone();
        t.keep_data = true;
        t
    }

    /// Why `build`, with replicas of `replica_build` (resolved from [`Replication::replica_build`]),
    /// cannot run this topology, in the words of the experiment file, if it cannot.
    pub fn problem(&self, build: &Build, replica_build: Option<&Build>) -> Option<String> {
        let primary = SandboxSpec::new("run", build.clone(), Path::new("/nonexistent/run"));
        let spec = self.spec(primary, replica_build.cloned());
        match spec.check().err()? {
            crate::error::Error::Option { option, message } => {
                let key = match option.as_str() {
                    "--semi-sync" => "semi_sync",
                    "--replica-delay" => "delay",
                    "--replica-set" => "replica_set",
                    "--replica-build" => "build",
                    _ => "replicas",
                };
                let why = message
                    .replace("drop --semi-sync", "drop semi_sync")
                    .replace("give 1 to 9", "give 1 to 9 replicas");
                Some(format!("replication.{key}: {why}"))
            }
            other => Some(format!("replication: {other}")),
        }
    }

    /// The topology in a few words, for `--dry-run`: "2 replicas, semi-synchronous, delays 0,3 s".
    pub fn describe(&self) -> String {
        let mut s = format!("{} replica{}", self.replicas, if self.replicas == 1 { "" } else { "s" });
        s.push_str(if self.semi_sync { ", semi-synchronous" } else { ", asynchronous" });
        if self.delays.iter().any(|d| *d > 0) {
            let d: Vec<String> = self.delays.iter().map(u32::to_string).collect();
            s.push_str(&format!(", delays {} s", d.join(",")));
        }
        if let Some(b) = &self.replica_build {
            s.push_str(&format!(", replicas on build {b}"));
        }
        if !self.replica_overrides.is_empty() {
            s.push_str(&format!(", replicas set {}", self.replica_overrides.join(" ")));
        }
        s
    }
}
