//! What a client process and its coordinator say to each other: one JSON object per line on the
//! client's stdout, and one line on its stdin (`go EPOCH_NS`, the instant every client starts measuring).
//! Latency histograms travel whole (HdrHistogram V2 with deflate, base64), so that the coordinator adds
//! them exactly instead of averaging percentiles.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::super::session::Counts;
use super::super::stats::{Latency, ThreadFigures};
use crate::error::{Error, Result};
use crate::sampler::client_load::ClientLoad;

/// One line of a client's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Message {
    /// Every connection of the client is open and its statements prepared: it waits at the barrier.
    Ready {
        /// The client's host name.
        host: String,
        /// Its process id there.
        pid: u32,
    },
    /// The client's clock started (wall clock, ns since the Unix epoch).
    Started {
        /// When, by the client host's clock.
        epoch_ns: u64,
    },
    /// The warm-up ended: the client's figures start again from zero.
    WarmupDone,
    /// One `--report-interval` period of the client.
    Interval(PartInterval),
    /// The client finished; its whole run.
    Done(PartResult),
    /// The client could not run the load (before the barrier: it could not connect or prepare).
    Failed {
        /// Where it ran.
        host: String,
        /// Why, in one line.
        error: String,
    },
}

/// A client's figures of one period, with its latency histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartInterval {
    /// Seconds since the client's start at the end of the period.
    pub time: f64,
    /// Measured length of the period in seconds.
    pub duration: f64,
    /// The client's threads still running.
    pub threads: u32,
    /// Counts in the period.
    pub counts: Counts,
    /// Exact latency figures of the period.
    pub latency: Latency,
    /// Under `--rate`: events waiting, and events in service.
    pub queue: Option<(u64, u64)>,
    /// The period's latency histogram (µs), encoded by [`encode`].
    pub histogram: String,
}

/// A client's whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartResult {
    /// sysbench's total time, in seconds.
    pub total_time: f64,
    /// The time its counts cover, in seconds.
    pub time_interval: f64,
    /// Counts.
    pub counts: Counts,
    /// Exact latency figures.
    pub latency: Latency,
    /// The run's latency histogram (µs), encoded by [`encode`].
    pub histogram: String,
    /// Per worker thread.
    pub per_thread: Vec<ThreadFigures>,
    /// Stopped by an interrupt.
    pub interrupted: bool,
    /// Events still running at a forced shutdown.
    pub forced_unfinished: Option<u64>,
    /// Events left unfinished when the grace after an interrupt ran out.
    pub interrupted_unfinished: Option<u64>,
    /// The client process's own CPU and its CPUs' load.
    pub client: Option<ClientLoad>,
}

impl Message {
    /// The message as one line (with its newline).
    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("plain data serializes");
        s.push('\n');
        s
    }

    /// Reads one line of a client's stdout.
    pub fn parse(line: &str) -> Result<Message> {
        serde_json::from_str(line.trim_end())
            .map_err(|e| Error::Other(format!("a client sent a line the coordinator cannot read ({e}): {line:.120}")))
    }
}

/// A client's stdout line as a [`Message`]; `None` for a line that is not one (not a JSON object).
pub fn message(line: &str) -> Result<Option<Message>> {
    if !line.starts_with('{') {
        return Ok(None);
    }
    Message::parse(line).map(Some)
}

/// A histogram as text for a [`Message`].
pub fn encode(h: &Histogram<u64>) -> Result<String> {
    Ok(STANDARD.encode(crate::store::encode_histogram(h)?))
}

/// The histogram of [`encode`].
pub fn decode(text: &str) -> Result<Histogram<u64>> {
    let bytes = STANDARD
        .decode(text)
        .map_err(|e| Error::Other(format!("a client sent a latency histogram that is not base64: {e}")))?;
    let mut h = crate::store::decode_histogram(&bytes)?;
    // A decoded histogram keeps its range; sums of several grow beyond any one of them.
    h.auto(true);
    Ok(h)
}

/// The coordinator's line that releases the clients: they start measuring at `epoch_ns`.
pub fn go_line(epoch_ns: u64) -> String {
    format!("go {epoch_ns}\n")
}

/// The instant of a [`go_line`]; `None` for anything else.
pub fn parse_go(line: &str) -> Option<u64> {
    line.trim().strip_prefix("go ")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_histograms_round_trip() {
        let mut h = super::super::super::stats::new_histogram();
        for v in [3u64, 17, 900, 12_345, 1_000_000] {
            h.record(v).unwrap();
        }
        let back = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        let m = Message::Interval(PartInterval {
            time: 1.0,
            duration: 1.0,
            threads: 2,
            counts: Counts { events: 5, ..Counts::default() },
            latency: Latency::default(),
            queue: Some((1, 2)),
            histogram: encode(&h).unwrap(),
        });
        let line = m.line();
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        assert_eq!(Message::parse(&line).unwrap(), m);
        assert_eq!(parse_go(&go_line(42)), Some(42));
        assert_eq!(parse_go("stop"), None);
        assert!(Message::parse("{\"nope\":1}").is_err());
    }
}
