//! Encoding what the client sends: length-encoded integers, COM_STMT_EXECUTE payloads, and commands
//! framed into packets.

use super::Param;
use super::packet::MAX_PAYLOAD;

/// Appends `v` as a length-encoded integer.
#[unsafe(link_section = ".text.hot.versus")]
pub(super) fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..0xFB => out.push(v as u8),
        0xFB..0x1_0000 => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..0x100_0000 => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Appends the COM_STMT_EXECUTE payload for statement `id` to `out`, parameters bound as BIGINT / VARCHAR.
/// `bound` holds the parameter types last sent for this statement: they are sent again only when they
/// change, as libmariadb and libmysqlclient do (new-params-bound flag 0 otherwise), and `bound` is updated.
#[inline]
#[unsafe(link_section = ".text.hot.versus")]
pub fn execute_payload(out: &mut Vec<u8>, id: u32, params: &[Param<'_>], bound: &mut Vec<u8>) {
    let id = id.to_le_bytes();
    // Command, statement id, no cursor, iteration count 1.
    out.extend_from_slice(&[0x17, id[0], id[1], id[2], id[3], 0, 1, 0, 0, 0]);
    if params.is_empty() {
        return;
    }
    let type_of = |p: &Param<'_>| match p {
        Param::Int(_) => 0x08,
        Param::Str(_) => 0xFD,
        Param::Null => 0x06,
    };
    let same =
        bound.len() == 2 * params.len() && params.iter().zip(bound.chunks_exact(2)).all(|(p, t)| t[0] == type_of(p));
    if !same {
        bound.clear();
        bound.extend(params.iter().flat_map(|p| [type_of(p), 0]));
    }
    // The NULL bitmap (no NULLs) and the new-params-bound flag, then the types if they changed.
    let bitmap = params.len().div_ceil(8);
    let nulls = params.iter().any(|p| matches!(p, Param::Null));
    if bitmap == 1 && !nulls {
        out.extend_from_slice(&[0, u8::from(!same)]);
    } else {
        let at = out.len();
        out.resize(at + bitmap, 0);
        for (i, p) in params.iter().enumerate() {
            if matches!(p, Param::Null) {
                out[at + i / 8] |= 1 << (i % 8);
            }
        }
        out.push(u8::from(!same));
    }
    if !same {
        out.extend_from_slice(bound);
    }
    for p in params {
        match p {
            Param::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::Str(s) => {
                put_lenenc(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
            Param::Null => {}
        }
    }
}

/// Appends `payload` to `out` as a command's packets (sequence numbers from 0), as [`Wire`] sends it.
pub fn frame_command(out: &mut Vec<u8>, payload: &[u8]) {
    frame(out, payload, 0);
}

/// Appends `payload` to `out` as packets numbered from `seq` (16 MiB chunks, an empty packet after a
/// payload that fills the last one); returns the next sequence number.
pub(super) fn frame(out: &mut Vec<u8>, payload: &[u8], mut seq: u8) -> u8 {
    let mut chunks = payload.chunks(MAX_PAYLOAD).peekable();
    if payload.is_empty() {
        out.extend_from_slice(&[0, 0, 0, seq]);
        seq = seq.wrapping_add(1);
    }
    while let Some(c) = chunks.next() {
        out.extend_from_slice(&(c.len() as u32).to_le_bytes()[..3]);
        out.push(seq);
        seq = seq.wrapping_add(1);
        out.extend_from_slice(c);
        if chunks.peek().is_none() && c.len() == MAX_PAYLOAD {
            out.extend_from_slice(&[0, 0, 0, seq]);
            seq = seq.wrapping_add(1);
        }
    }
    seq
}

#[cfg(test)]
mod tests {
    use super::super::packet::lenenc;
    use super::*;

    #[test]
    fn lenenc_round_trip() {
        for v in [0u64, 250, 251, 65_535, 65_536, 16_777_215, 16_777_216, u64::MAX] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            assert_eq!(lenenc(&b), (v, b.len()), "{v}");
        }
    }

    #[test]
    fn commands_are_framed_from_sequence_zero() {
        let mut out = Vec::new();
        frame_command(&mut out, b"\x03BEGIN");
        assert_eq!(out, b"\x06\x00\x00\x00\x03BEGIN");
        // A payload that fills a packet exactly is followed by an empty one.
        let big = vec![7u8; MAX_PAYLOAD];
        out.clear();
        frame_command(&mut out, &big);
        assert_eq!(out.len(), 4 + MAX_PAYLOAD + 4);
        assert_eq!(&out[..4], &[0xFF, 0xFF, 0xFF, 0]);
        assert_eq!(&out[4 + MAX_PAYLOAD..], &[0, 0, 0, 1]);
    }

    #[test]
    fn parameter_types_are_sent_only_when_they_change() {
        let mut bound = Vec::new();
        let mut first = Vec::new();
        execute_payload(&mut first, 9, &[Param::Int(5), Param::Str("ab")], &mut bound);
        let mut want = vec![0x17, 9, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x08, 0, 0xFD, 0];
        want.extend_from_slice(&5i64.to_le_bytes());
        want.extend_from_slice(&[2, b'a', b'b']);
        assert_eq!(first, want);
        let mut again = Vec::new();
        execute_payload(&mut again, 9, &[Param::Int(6), Param::Str("cd")], &mut bound);
        assert_eq!(again[11], 0, "same types: new-params-bound flag 0, no types");
        assert_eq!(again.len(), first.len() - 4);
        let mut changed = Vec::new();
        execute_payload(&mut changed, 9, &[Param::Str("x"), Param::Str("cd")], &mut bound);
        assert_eq!(&changed[11..16], &[1, 0xFD, 0, 0xFD, 0]);
    }

    #[test]
    fn nulls_are_marked_in_the_bitmap_and_send_no_value() {
        let mut out = Vec::new();
        execute_payload(&mut out, 9, &[Param::Int(5), Param::Null, Param::Str("ab")], &mut Vec::new());
        let mut want = vec![0x17, 9, 0, 0, 0, 0, 1, 0, 0, 0, 0b010, 1, 0x08, 0, 0x06, 0, 0xFD, 0];
        want.extend_from_slice(&5i64.to_le_bytes());
        want.extend_from_slice(&[2, b'a', b'b']);
        assert_eq!(out, want);
        let mut text = String::new();
        crate::driver::substitute("INSERT INTO t VALUES (?, ?)", &[Param::Int(1), Param::Null], &mut text);
        assert_eq!(text, "INSERT INTO t VALUES (1, NULL)");
    }

    #[test]
    fn more_than_eight_parameters_have_a_longer_null_bitmap() {
        let params: Vec<Param<'_>> = (0..9).map(Param::Int).collect();
        let mut out = Vec::new();
        execute_payload(&mut out, 1, &params, &mut Vec::new());
        assert_eq!(&out[10..13], &[0, 0, 1], "two bitmap bytes, then the new-params-bound flag");
        assert_eq!(&out[13..31], [0x08, 0].repeat(9).as_slice());
        assert_eq!(out.len(), 31 + 9 * 8);
        assert_eq!(&out[31..39], &0i64.to_le_bytes());
    }
}
