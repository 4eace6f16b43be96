//! Why a variable that differs between A and B is not bisected: the reasons shared by the transfer
//! classification (what can be given to B) and the pre-flight (what B accepts).

use serde::{Deserialize, Serialize};

use super::noise::NoiseKind;

/// Why a differing variable is not bisected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason", content = "detail")]
pub enum SkipReason {
    /// It exists only on A: the gap it causes, if any, cannot be explained by configuration.
    NotOnB,
    /// It exists only on B: there is no A value to give it.
    OnlyOnB,
    /// Its difference is noise (paths, ports, ids, versions, host-sized or derived).
    Noise(NoiseKind),
    /// B refused to start with A's value (the server's words).
    Rejected(String),
    /// B started but reports another value than A's (the value it reports).
    Adjusted(String),
    /// A global value the server derives from the named variable, which is moved instead.
    Follows(String),
    /// A session value each connection's client decides; the global value is only a default.
    Client,
    /// Nothing of A's value can be given to B (why: a variable unused on one side …).
    NotGiven(String),
}

impl SkipReason {
    /// Whether the variable is unexplainable by configuration (as opposed to irrelevant noise).
    pub fn unexplainable(&self) -> bool {
        !matches!(self, SkipReason::Noise(_) | SkipReason::Follows(_) | SkipReason::Client)
    }

    /// Words for a table.
    pub fn text(&self) -> String {
        match self {
            SkipReason::NotOnB => "does not exist on B".into(),
            SkipReason::OnlyOnB => "exists only on B".into(),
            SkipReason::Noise(k) => format!("noise ({})", k.label()),
            SkipReason::Rejected(why) => format!("B does not start with A's value: {why}"),
            SkipReason::Adjusted(got) => format!("B reports {got} when given A's value"),
            SkipReason::Follows(v) => format!("follows {v}, which is moved instead"),
            SkipReason::Client => "a session value: each connection's client sets it".into(),
            SkipReason::NotGiven(why) => format!("not given to B: {why}"),
        }
    }
}

/// A differing variable that is not bisected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// Variable name.
    pub name: String,
    /// A's value.
    pub a: Option<String>,
    /// B's value.
    pub b: Option<String>,
    /// Why.
    pub reason: SkipReason,
}
