//! HTTP downloads into the cache: resumed with `Range` after a dropped connection or an interrupted run,
//! with a progress bar (bytes, rate, ETA) on a terminal and progress lines otherwise, and a free-space check
//! before the body is written.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a download may be resumed after the connection dropped.
const MAX_RESUMES: u32 = 20;
/// How much room the unpacked tree needs, as a multiple of the tarball (xz-packed MySQL trees are ~4.5×).
pub const UNPACK_FACTOR: u64 = 5;
/// Text responses (sum files, pages, API answers) larger than this are refused.
const TEXT_LIMIT: u64 = 32 << 20;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpError {
    /// 404 or 410: the file is not there.
    NotFound(String),
    /// Another HTTP error status.
    Status(u16, String),
    /// The host could not be reached (no network, DNS failure, refused, timed out).
    Unreachable(String, String),
    /// Anything else, already phrased.
    Other(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::NotFound(url) => write!(f, "{url}: not found (HTTP 404)"),
            HttpError::Status(code, url) => write!(f, "{url}: HTTP {code}"),
            HttpError::Unreachable(host, why) => write!(
                f,
                "cannot reach {host} ({why}); without network use --offline (cached downloads only) or --mirror URL"
            ),
            HttpError::Other(m) => f.write_str(m),
        }
    }
}

fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    rest.split('/').next().unwrap_or(rest).to_string()
}

fn classify(url: &str, e: ureq::Error) -> HttpError {
    match e {
        ureq::Error::StatusCode(404 | 410) => HttpError::NotFound(url.to_string()),
        ureq::Error::StatusCode(code) => HttpError::Status(code, url.to_string()),
        ureq::Error::HostNotFound => HttpError::Unreachable(host_of(url), "host not found".into()),
        ureq::Error::ConnectionFailed => HttpError::Unreachable(host_of(url), "connection failed".into()),
        ureq::Error::Timeout(t) => HttpError::Unreachable(host_of(url), format!("timed out: {t}")),
        ureq::Error::Io(io) => HttpError::Unreachable(host_of(url), io.to_string()),
        other => HttpError::Other(format!("{url}: {other}")),
    }
}

/// A progress report: a bar on a terminal, else a line every few seconds through `log`.
pub struct DownloadProgress<'a> {
    label: String,
    bar: Option<ProgressBar>,
    log: &'a mut dyn FnMut(&str),
    started: Instant,
    last_line: Instant,
    start_bytes: u64,
}

impl<'a> DownloadProgress<'a> {
    /// Reports on `label` (the file name); a bar when stderr is a terminal.
    pub fn new(label: &str, log: &'a mut dyn FnMut(&str)) -> DownloadProgress<'a> {
        let bar = std::io::IsTerminal::is_terminal(&std::io::stderr()).then(|| {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            b.set_message(label.to_string());
            b
        });
        DownloadProgress {
            label: label.to_string(),
            bar,
            log,
            started: Instant::now(),
            last_line: Instant::now(),
            start_bytes: 0,
        }
    }

    fn begin(&mut self, have: u64, total: Option<u64>) {
        self.started = Instant::now();
        self.start_bytes = have;
        if let Some(b) = &self.bar {
            b.set_length(total.unwrap_or(0));
            b.set_position(have);
        }
        if have > 0 {
            (self.log)(&format!("{}: resuming at {}", self.label, mb(have)));
        }
    }

    fn update(&mut self, done: u64, total: Option<u64>) {
        if let Some(b) = &self.bar {
            b.set_position(done);
            return;
        }
        if self.last_line.elapsed() >= Duration::from_secs(5) {
            self.last_line = Instant::now();
            let line = self.line(done, total);
            (self.log)(&line);
        }
    }

    fn line(&self, done: u64, total: Option<u64>) -> String {
        let secs = self.started.elapsed().as_secs_f64().max(0.001);
        let rate = (done - self.start_bytes.min(done)) as f64 / secs;
        let mut s = format!("{}: {}", self.label, mb(done));
        if let Some(t) = total {
            s.push_str(&format!(" of {}", mb(t)));
        }
        s.push_str(&format!(", {}/s", mb(rate as u64)));
        if let Some(t) = total.filter(|_| rate > 0.0) {
            s.push_str(&format!(", ETA {:.0} s", t.saturating_sub(done) as f64 / rate));
        }
        s
    }

    fn finish(&mut self, done: u64) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        let secs = self.started.elapsed().as_secs_f64();
        (self.log)(&format!("{}: downloaded {} in {secs:.1} s", self.label, mb(done)));
    }
}

impl Drop for DownloadProgress<'_> {
    fn drop(&mut self) {
        if let Some(b) = self.bar.take() {
            b.abandon();
        }
    }
}

/// `123.4 MB`.
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// Bytes free for an unprivileged user in the file system holding `dir` (or its nearest existing parent).
pub fn free_space(dir: &Path) -> Option<u64> {
    let mut p = dir;
    while !p.exists() {
        p = p.parent()?;
    }
    let s = nix::sys::statvfs::statvfs(p).ok()?;
    Some(s.blocks_available() as u64 * s.fragment_size() as u64)
}

/// An HTTP client with timeouts fit for big files.
pub struct Http {
    agent: ureq::Agent,
}

impl Default for Http {
    fn default() -> Self {
        Http::new()
    }
}

impl Http {
    /// A client following redirects, with connect and read timeouts.
    pub fn new() -> Http {
        let config = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(20)))
            .timeout_resolve(Some(Duration::from_secs(20)))
            .timeout_per_read(Some(Duration::from_secs(60)))
            .user_agent(format!("versus/{}", env!("CARGO_PKG_VERSION")))
            .http_status_as_error(true)
            .build();
        Http { agent: config.into() }
    }

    /// GETs a text resource (a sum file, a page, an API answer).
    pub fn get_text(&self, url: &str) -> Result<String, HttpError> {
        tracing::debug!("GET {url}");
        let mut resp = self.agent.get(url).call().map_err(|e| classify(url, e))?;
        resp.body_mut()
            .with_config()
            .limit(TEXT_LIMIT)
            .read_to_string()
            .map_err(|e| HttpError::Other(format!("{url}: reading the answer failed: {e}")))
    }

    /// Asks whether `url` exists (HEAD).
    pub fn head(&self, url: &str) -> Result<Option<u64>, HttpError> {
        tracing::debug!("HEAD {url}");
        let resp = self.agent.head(url).call().map_err(|e| classify(url, e))?;
        Ok(resp.headers().get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok()))
    }

    /// Downloads `url` into `part`, appending to what a previous attempt left there (HTTP `Range`), and
    /// resuming when the connection drops. `room` checks the total size against free space before the body
    /// is written. Returns the file's size.
    pub fn download(
        &self,
        url: &str,
        part: &Path,
        room: &dyn Fn(u64, u64) -> Result<(), String>,
        progress: &mut DownloadProgress,
    ) -> Result<u64, HttpError> {
        let io = |e: std::io::Error| HttpError::Other(format!("writing {}: {e}", part.display()));
        let mut resumes = 0;
        let mut began = false;
        loop {
            let have = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
            tracing::debug!("GET {url} into {} from byte {have}", part.display());
            let mut req = self.agent.get(url);
            if have > 0 {
                req = req.header("Range", format!("bytes={have}-"));
            }
            let resp = match req.call() {
                Ok(r) => r,
                Err(ureq::Error::StatusCode(416)) if have > 0 => {
                    // The part is as long as the file (or longer): start over; the checksum decides.
                    crate::owned::remove_file(part).map_err(|e| HttpError::Other(e.to_string()))?;
                    continue;
                }
                Err(e) => {
                    let e = classify(url, e);
                    if matches!(e, HttpError::Unreachable(..)) && began && resumes < MAX_RESUMES {
                        resumes += 1;
                        std::thread::sleep(Duration::from_millis(500));
                        continue;
                    }
                    return Err(e);
                }
            };
            let partial = resp.status().as_u16() == 206;
            let start = if partial { content_range_start(resp.headers()).unwrap_or(u64::MAX) } else { 0 };
            if partial && start != have {
                crate::owned::remove_file(part).map_err(|e| HttpError::Other(e.to_string()))?;
                continue;
            }
            let length = resp.body().content_length();
            let total = length.map(|l| l + start);
            if let Some(t) = total {
                room(t, t - start).map_err(HttpError::Other)?;
            }
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(partial)
                .truncate(!partial)
                .open(part)
                .map_err(io)?;
            if !began {
                progress.begin(start, total);
                began = true;
            }
            let mut reader = resp.into_body().into_reader();
            let mut done = start;
            let mut buf = vec![0u8; 256 * 1024];
            let dropped = loop {
                match reader.read(&mut buf) {
                    Ok(0) => break total.is_some_and(|t| done < t),
                    Ok(n) => {
                        file.write_all(&buf[..n]).map_err(io)?;
                        done += n as u64;
                        progress.update(done, total);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break true,
                }
            };
            file.flush().map_err(io)?;
            if !dropped {
                progress.finish(done);
                return Ok(done);
            }
            resumes += 1;
            if resumes > MAX_RESUMES {
                return Err(HttpError::Other(format!(
                    "{url}: the connection dropped {MAX_RESUMES} times; {} of the file are kept in {} for the next try",
                    mb(done),
                    part.display()
                )));
            }
            (progress.log)(&format!("{}: connection dropped at {}; resuming", progress.label, mb(done)));
        }
    }
}

/// The first byte of a `Content-Range: bytes 100-199/200` header.
fn content_range_start(headers: &ureq::http::HeaderMap) -> Option<u64> {
    let v = headers.get("content-range")?.to_str().ok()?;
    let range = v.trim().strip_prefix("bytes")?.trim();
    range.split('-').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_way_out() {
        let e = HttpError::Unreachable("cdn.mysql.com".into(), "host not found".into()).to_string();
        assert!(e.contains("--offline") && e.contains("--mirror"), "{e}");
        assert_eq!(host_of("https://archive.mariadb.org/mariadb-10.6.21/x"), "archive.mariadb.org");
        assert!(free_space(Path::new("/tmp/does/not/exist/yet")).is_some_and(|b| b > 0));
    }

    #[test]
    fn progress_lines_have_bytes_rate_and_eta() {
        let mut lines = Vec::new();
        let mut log = |l: &str| lines.push(l.to_string());
        let mut p = DownloadProgress::new("f.tar.xz", &mut log);
        p.bar = None;
        p.begin(0, Some(10_000_000));
        std::thread::sleep(Duration::from_millis(20));
        let line = p.line(5_000_000, Some(10_000_000));
        assert!(line.starts_with("f.tar.xz: 5.0 MB of 10.0 MB, "), "{line}");
        assert!(line.contains(" MB/s, ETA "), "{line}");
    }
}
