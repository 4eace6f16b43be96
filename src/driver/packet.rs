//! What the protocol's parts share: packet limits and flags, length-encoded integers, ERR packets, and
//! why a connection attempt failed.

use super::DbError;

/// The server-status flag: more result sets follow.
pub(super) const MORE_RESULTS: u16 = 0x0008;
/// The largest payload of one packet.
pub(super) const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// Why a connection attempt did not succeed.
#[derive(Debug)]
pub enum ConnectFailure {
    /// The server wants something this client does not do (an auth plugin, full authentication
    /// over plain TCP); another client may succeed.
    Unsupported(String),
    /// A real failure (network, server error).
    Failed(DbError),
}

/// A length-encoded integer at the start of `p`, and the bytes it takes.
pub(super) fn lenenc(p: &[u8]) -> (u64, usize) {
    match p.first() {
        Some(&b) if b < 0xFB => (b as u64, 1),
        Some(0xFC) if p.len() >= 3 => (u16::from_le_bytes([p[1], p[2]]) as u64, 3),
        Some(0xFD) if p.len() >= 4 => (u32::from_le_bytes([p[1], p[2], p[3], 0]) as u64, 4),
        Some(0xFE) if p.len() >= 9 => (u64::from_le_bytes(p[1..9].try_into().expect("8 bytes")), 9),
        _ => (0, 1),
    }
}

/// How many column definition packets follow the column count packet `p`: none when the server says that
/// the metadata did not change (its metadata-follows byte, present under MariaDB's metadata caching).
pub(super) fn column_defs(p: &[u8], cache_metadata: bool) -> u64 {
    let (cols, n) = lenenc(p);
    if cache_metadata && p.get(n) == Some(&0) { 0 } else { cols }
}

/// The server error in an ERR packet.
pub fn parse_err(p: &[u8]) -> DbError {
    let code = if p.len() >= 3 { u16::from_le_bytes([p[1], p[2]]) } else { 0 };
    let msg = if p.len() > 9 && p[3] == b'#' { &p[9..] } else { p.get(3..).unwrap_or(&[]) };
    DbError::server(code, String::from_utf8_lossy(msg).into_owned())
}

/// The `n` columns of a text-protocol row as text; `None` for NULL.
pub(super) fn text_row(mut row: &[u8], n: usize) -> Vec<Option<String>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        if row.first() == Some(&0xFB) {
            out.push(None);
            row = &row[1..];
            continue;
        }
        let (len, k) = lenenc(row);
        let end = k.saturating_add(len as usize).min(row.len());
        out.push(Some(String::from_utf8_lossy(&row[k.min(end)..end]).into_owned()));
        row = &row[end..];
    }
    out
}

/// The first column of a text-protocol row as text; `None` for NULL.
pub(super) fn first_text(row: &[u8]) -> Option<String> {
    if row.first() == Some(&0xFB) {
        return None;
    }
    let (len, n) = lenenc(row);
    let end = n.saturating_add(len as usize).min(row.len());
    Some(String::from_utf8_lossy(&row[n.min(end)..end]).into_owned())
}
