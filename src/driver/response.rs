//! Scanning a server response in a byte buffer without consuming it, for the event-loop workers.

use super::packet::{MAX_PAYLOAD, MORE_RESULTS, column_defs, lenenc, parse_err};
use super::{DbError, ErrorKind, Outcome};

/// Packets of `buf`: (payload start, payload end) pairs while complete.
#[unsafe(link_section = ".text.hot.versus")]
fn next_packet(buf: &[u8], at: usize) -> Option<(usize, usize)> {
    let h = buf.get(at..at + 4)?;
    let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
    if len >= MAX_PAYLOAD || buf.len() < at + 4 + len {
        return None; // incomplete (responses of 16 MiB packets are not expected in the run phase)
    }
    Some((at + 4, at + 4 + len))
}

/// What [`scan`] found at the start of a buffer.
pub enum Scanned {
    /// A whole response: the bytes it takes and its outcome.
    Response(usize, Result<Outcome, DbError>),
    /// The server asks for a LOCAL INFILE file (after any results before it; nothing consumed).
    LocalInfile,
}

/// Scans one full response at the start of `buf` without consuming it: the bytes it takes and the
/// outcome, or None when more bytes are needed. `cache_metadata`: MariaDB's metadata caching is on.
pub fn scan_response(buf: &[u8], cache_metadata: bool) -> Option<(usize, Result<Outcome, DbError>)> {
    Some(match scan(buf, cache_metadata)? {
        Scanned::Response(n, r) => (n, r),
        Scanned::LocalInfile => {
            let e = DbError { kind: ErrorKind::Client, code: None, message: "unexpected LOCAL INFILE request".into() };
            (local_request_end(buf)?, Err(e))
        }
    })
}

/// The end of the LOCAL INFILE request packet in `buf` (after the results before it).
fn local_request_end(buf: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let (s, e) = next_packet(buf, at)?;
        if buf[s..e].first() == Some(&0xFB) {
            return Some(e);
        }
        at = e;
    }
}

/// Scans one full response at the start of `buf` without consuming it, or None when more bytes are
/// needed (or a packet is 16 MiB or larger, which this scan does not join).
#[unsafe(link_section = ".text.hot.versus")]
pub fn scan(buf: &[u8], cache_metadata: bool) -> Option<Scanned> {
    let mut at = 0;
    let mut outcome = None;
    loop {
        let (s, e) = next_packet(buf, at)?;
        at = e;
        let p = &buf[s..e];
        let more = match p.first().copied() {
            Some(0x00) => {
                let (affected, n) = lenenc(&p[1..]);
                let (_, m) = lenenc(&p[1 + n..]);
                let st = 1 + n + m;
                outcome.get_or_insert(if affected > 0 { Outcome::Write } else { Outcome::Other });
                p.get(st..st + 2).is_some_and(|b| u16::from_le_bytes([b[0], b[1]]) & MORE_RESULTS != 0)
            }
            Some(0xFF) => return Some(Scanned::Response(at, Err(parse_err(p)))),
            Some(0xFB) => return Some(Scanned::LocalInfile),
            _ => {
                for _ in 0..=column_defs(p, cache_metadata) {
                    at = next_packet(buf, at)?.1;
                }
                let more;
                loop {
                    let (s, e) = next_packet(buf, at)?;
                    at = e;
                    let r = &buf[s..e];
                    match r.first() {
                        Some(0xFE) if r.len() < 9 => {
                            more = r.get(3..5).is_some_and(|b| u16::from_le_bytes([b[0], b[1]]) & MORE_RESULTS != 0);
                            break;
                        }
                        Some(0xFF) => return Some(Scanned::Response(at, Err(parse_err(r)))),
                        _ => {}
                    }
                }
                outcome.get_or_insert(Outcome::Read);
                more
            }
        };
        if !more {
            return Some(Scanned::Response(at, Ok(outcome.unwrap_or(Outcome::Other))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        v.push(seq);
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn scan_waits_for_complete_responses() {
        // A result set: 1 column, its definition, EOF, two rows, EOF; then an OK with 1 affected row.
        let mut buf = packet(1, &[1]);
        buf.extend(packet(2, b"coldef"));
        buf.extend(packet(3, &[0xFE, 0, 0, 0, 0]));
        buf.extend(packet(4, &[0, 0, 3, b'a', b'b', b'c']));
        buf.extend(packet(5, &[0, 0, 1, b'x']));
        let set_end = buf.len() + 9;
        buf.extend(packet(6, &[0xFE, 0, 0, 2, 0]));
        buf.extend(packet(1, &[0, 1, 0, 2, 0, 0, 0]));
        for cut in 0..set_end {
            assert!(scan_response(&buf[..cut], false).is_none(), "cut {cut}");
        }
        let (used, r) = scan_response(&buf, false).unwrap();
        assert_eq!((used, r.unwrap()), (set_end, Outcome::Read));
        let (used2, r2) = scan_response(&buf[used..], false).unwrap();
        assert_eq!((used + used2, r2.unwrap()), (buf.len(), Outcome::Write));
        let mut err = vec![0xFF, 0xB5, 0x04, b'#'];
        err.extend_from_slice(b"HY000Lock wait timeout exceeded");
        let e = scan_response(&packet(1, &err), false).unwrap().1.unwrap_err();
        assert_eq!(e.code, Some(1205));
    }

    #[test]
    fn cached_metadata_is_not_waited_for() {
        // Under MariaDB's metadata caching, the column count packet says whether definitions follow.
        let mut skipped = packet(1, &[1, 0]);
        skipped.extend(packet(2, &[0xFE, 0, 0, 2, 0]));
        skipped.extend(packet(3, &[0, 0, 1, b'x']));
        skipped.extend(packet(4, &[0xFE, 0, 0, 2, 0]));
        assert_eq!(scan_response(&skipped, true).map(|(n, r)| (n, r.unwrap())), Some((skipped.len(), Outcome::Read)));
        let mut sent = packet(1, &[1, 1]);
        sent.extend(packet(2, b"coldef"));
        sent.extend(&skipped[6..]);
        assert_eq!(scan_response(&sent, true).map(|(n, r)| (n, r.unwrap())), Some((sent.len(), Outcome::Read)));
    }
}
