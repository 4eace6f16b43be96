//! Folding `perf script` output into stacks weighted by each sample's period (CPU nanoseconds for
//! `cpu-clock`), with inferno's collapser: frames that perf could not name become their object file in
//! brackets (`[mariadbd]`), kernel frames carry `_[k]`.

use inferno::collapse::Collapse;
use inferno::collapse::perf::{Folder, Options};

/// The event sampled: the only one a VM without a PMU offers, and timer-driven, so samples are CPU time.
pub const EVENT: &str = "cpu-clock";

/// The root frame of every stack. inferno puts the sampled thread's name (`comm`) first; thread names
/// differ between servers (`mariadbd`, `mysqld`, `connection`) and would make two targets' stacks
/// disjoint, so the root is one name for all.
pub const ROOT: &str = "server";

/// Folds `perf script` output read from `input` as it streams: `(stack, weight)` sorted by stack, and
/// the number of samples.
///
/// Errors: output that inferno cannot read, or folded lines that do not end in a weight.
pub fn fold_perf_script(input: impl std::io::Read) -> std::result::Result<(Vec<(String, u64)>, u64), String> {
    let mut options = Options::default();
    options.annotate_kernel = true;
    options.nthreads = 1;
    // Named up front: inferno then takes no guess from the first record (and asserts nothing about it).
    options.event_filter = Some(EVENT.to_string());
    let mut folder = Folder::from(options);
    let mut counted = SampleCounter { inner: input, samples: 0, at_line_start: true };
    let mut out = Vec::new();
    folder
        .collapse(std::io::BufReader::new(&mut counted), &mut out)
        .map_err(|e| format!("perf script output could not be folded: {e}"))?;
    let folded = String::from_utf8_lossy(&out);
    let mut merged: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for (stack, w) in parse_folded(&folded)? {
        let rest = stack.split_once(';').map_or("", |(_, rest)| rest);
        let rooted = if rest.is_empty() { ROOT.to_string() } else { format!("{ROOT};{rest}") };
        let e = merged.entry(rooted).or_default();
        *e = e.saturating_add(w);
    }
    Ok((merged.into_iter().collect(), counted.samples))
}

/// Counts the sample headers of `perf script` output going through it: the lines that do not begin
/// with white space.
struct SampleCounter<R> {
    inner: R,
    samples: u64,
    at_line_start: bool,
}

impl<R: std::io::Read> std::io::Read for SampleCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if self.at_line_start && !b.is_ascii_whitespace() {
                self.samples += 1;
            }
            self.at_line_start = b == b'\n';
        }
        Ok(n)
    }
}

/// Reads folded lines (`a;b;c 123`).
pub fn parse_folded(text: &str) -> std::result::Result<Vec<(String, u64)>, String> {
    let mut stacks = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (stack, weight) = line
            .rsplit_once(' ')
            .and_then(|(s, w)| Some((s, w.trim().parse::<u64>().ok()?)))
            .ok_or_else(|| format!("a folded stack without a weight: {}", crate::markup::shown(line)))?;
        stacks.push((stack.to_string(), weight));
    }
    Ok(stacks)
}

/// The folded form of `stacks` (one `stack weight` line each), as flame-graph tools read it.
pub fn to_folded(stacks: &[(String, u64)]) -> String {
    let mut s = String::new();
    for (stack, w) in stacks {
        s.push_str(stack);
        s.push(' ');
        s.push_str(&w.to_string());
        s.push('\n');
    }
    s
}

/// `stacks` as gzip-compressed folded text, as the store keeps them.
pub fn compress(stacks: &[(String, u64)]) -> std::result::Result<Vec<u8>, String> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(to_folded(stacks).as_bytes()).map_err(|e| format!("cannot compress a profile: {e}"))?;
    gz.finish().map_err(|e| format!("cannot compress a profile: {e}"))
}

/// The stacks of [`compress`]'s output.
pub fn decompress(data: &[u8]) -> std::result::Result<Vec<(String, u64)>, String> {
    use std::io::Read;
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let mut text = String::new();
    flate2::read::GzDecoder::new(data)
        .read_to_string(&mut text)
        .map_err(|e| format!("a stored profile cannot be read: {e}"))?;
    parse_folded(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
mariadbd 100/101 10.000001:    5025125 cpu-clock: 
\t    55d0a1b2c3d4 JOIN::exec+0x14 (/usr/sbin/mariadbd)
\t    55d0a1b2c000 mysql_execute_command+0x80 (/usr/sbin/mariadbd)
\t    7f0011223344 start_thread+0x1f (/usr/lib/x86_64-linux-gnu/libc.so.6)

mariadbd 100/101 10.005001:    5025125 cpu-clock: 
\t    55d0a1b2dddd [unknown] (/usr/sbin/mariadbd)
\t    55d0a1b2c000 mysql_execute_command+0x80 (/usr/sbin/mariadbd)
\t    7f0011223344 start_thread+0x1f (/usr/lib/x86_64-linux-gnu/libc.so.6)

mariadbd 100/102 10.005002:    5025125 cpu-clock: 
\tffffffff8100aaaa do_syscall_64+0x10 ([kernel.kallsyms])
\t    7f0011223344 start_thread+0x1f (/usr/lib/x86_64-linux-gnu/libc.so.6)

";

    #[test]
    fn folds_by_period_names_unknowns_by_object_and_marks_the_kernel() {
        let (stacks, samples) = fold_perf_script(SCRIPT.as_bytes()).unwrap();
        assert_eq!(samples, 3);
        assert_eq!(
            stacks,
            vec![
                ("server;start_thread;do_syscall_64_[k]".to_string(), 5_025_125),
                ("server;start_thread;mysql_execute_command;JOIN::exec".to_string(), 5_025_125),
                ("server;start_thread;mysql_execute_command;[mariadbd]".to_string(), 5_025_125),
            ]
        );
        assert_eq!(parse_folded(&to_folded(&stacks)).unwrap(), stacks);
        assert_eq!(decompress(&compress(&stacks).unwrap()).unwrap(), stacks);
    }

    #[test]
    fn thread_names_share_one_root_and_odd_output_does_not_panic() {
        let other = SCRIPT.replacen("mariadbd 100/101", "one_connection 100/105", 1);
        let (stacks, samples) = fold_perf_script(format!("\n\n{SCRIPT}{other}").as_bytes()).unwrap();
        assert_eq!(samples, 6);
        let joined = stacks.iter().find(|(s, _)| s.ends_with("JOIN::exec")).unwrap();
        assert_eq!(joined.1, 2 * 5_025_125, "{stacks:?}");
        assert!(stacks.iter().all(|(s, _)| s.starts_with("server;")), "{stacks:?}");
        assert_eq!(fold_perf_script("garbage\n\n".as_bytes()).unwrap().0, Vec::new());
    }

    #[test]
    fn a_line_without_weight_is_refused() {
        assert!(parse_folded("a;b\n").unwrap_err().contains("without a weight"));
    }
}
