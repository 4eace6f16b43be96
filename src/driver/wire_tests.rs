use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Duration;

use super::*;

#[test]
fn err_packet() {
    let mut p = vec![0xFF, 0xBD, 0x04, b'#'];
    p.extend_from_slice(b"40001Deadlock found");
    let e = parse_err(&p);
    assert_eq!((e.code, e.message.as_str()), (Some(1213), "Deadlock found"));
}

fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    v.push(seq);
    v.extend_from_slice(payload);
    v
}

/// A result set of one column with `rows` rows of `width` bytes each.
fn result_set(rows: usize, width: usize) -> Vec<u8> {
    let mut b = packet(1, &[1]);
    b.extend(packet(2, b"coldef"));
    b.extend(packet(3, &[0xFE, 0, 0, 2, 0]));
    let mut row = vec![0, 0xFC];
    row.extend_from_slice(&(width as u16).to_le_bytes());
    row.extend(std::iter::repeat_n(b'x', width));
    for i in 0..rows {
        b.extend(packet((4 + i) as u8, &row));
    }
    b.extend(packet(0, &[0xFE, 0, 0, 2, 0]));
    b
}

/// A client on one end of a socket pair; the other end plays the server.
fn pair() -> (Wire, UnixStream) {
    let (a, b) = UnixStream::pair().expect("socket pair");
    (Wire::new(Stream::Unix(a)), b)
}

#[test]
fn a_response_that_arrives_in_pieces_is_read_whole() {
    let (mut w, mut server) = pair();
    let mut bytes = result_set(3, 40);
    let set = bytes.len();
    bytes.extend(packet(1, &[0, 1, 0, 2, 0, 0, 0]));
    let writer = thread::spawn(move || {
        // Cuts inside a header and inside a payload; the pauses let the client read each piece alone.
        for piece in [&bytes[..2], &bytes[2..17], &bytes[17..set + 3], &bytes[set + 3..]] {
            server.write_all(piece).expect("write");
            thread::sleep(Duration::from_millis(20));
        }
        server
    });
    assert_eq!(w.read_result(None).expect("result set"), Outcome::Read);
    assert_eq!(w.read_result(None).expect("OK"), Outcome::Write, "the next response starts where the set ended");
    assert_eq!(w.rpos, w.rend, "nothing left over");
    drop(writer.join());
}

#[test]
fn a_response_larger_than_the_buffer_is_read_packet_by_packet() {
    let (mut w, mut server) = pair();
    let rows = 3 * w.rbuf.len() / 200;
    let mut bytes = result_set(rows, 200);
    assert!(bytes.len() > 2 * w.rbuf.len());
    bytes.extend(packet(1, &[0, 0, 0, 2, 0, 0, 0]));
    let writer = thread::spawn(move || server.write_all(&bytes).map(|_| server));
    assert_eq!(w.read_result(None).expect("result set"), Outcome::Read);
    assert_eq!(w.read_result(None).expect("OK"), Outcome::Other);
    drop(writer.join());
}

#[test]
fn a_local_infile_request_after_a_result_is_answered() {
    let (mut w, mut server) = pair();
    let writer = thread::spawn(move || {
        // An OK with more results to come, then a LOCAL INFILE request.
        let mut first = packet(1, &[0, 0, 0, MORE_RESULTS as u8, 0, 0, 0]);
        first.extend(packet(2, b"\xFBdata.csv"));
        server.write_all(&first).expect("write");
        let mut answer = [0u8; 4];
        server.read_exact(&mut answer).expect("the client's answer");
        server.write_all(&packet(4, &[0xFF, 0x1C, 0x04, b'#', b'H', b'Y', b'0', b'0', b'0', b'n'])).expect("write");
        answer
    });
    let e = w.read_result(None).expect_err("the server refuses the empty file");
    assert_eq!(e.code, Some(1052));
    assert_eq!(writer.join().expect("server"), [0, 0, 0, 3], "an empty packet, numbered after the request");
}

#[test]
fn query_rows_counts_rows_and_keeps_the_first_value() {
    let (mut w, mut server) = pair();
    let mut bytes = packet(1, &[1]);
    bytes.extend(packet(2, b"coldef"));
    bytes.extend(packet(3, &[0xFE, 0, 0, 2, 0]));
    bytes.extend(packet(4, b"\x054242x"));
    bytes.extend(packet(5, b"\xFB"));
    bytes.extend(packet(6, &[0xFE, 0, 0, 2, 0]));
    // Then a NULL first, and an OK that changed 3 rows.
    bytes.extend(packet(1, &[1]));
    bytes.extend(packet(2, b"coldef"));
    bytes.extend(packet(3, &[0xFE, 0, 0, 2, 0]));
    bytes.extend(packet(4, b"\xFB"));
    bytes.extend(packet(5, &[0xFE, 0, 0, 2, 0]));
    bytes.extend(packet(1, &[0, 3, 0, 2, 0, 0, 0]));
    let writer = thread::spawn(move || server.write_all(&bytes).map(|_| server));
    let r = w.query_rows("SELECT x").expect("rows");
    assert_eq!((r.outcome, r.fetched, r.first.as_deref()), (Some(Outcome::Read), 2, Some("4242x")));
    let r = w.query_rows("SELECT NULL").expect("rows");
    assert_eq!((r.fetched, r.first), (1, None));
    let r = w.query_rows("UPDATE t").expect("OK");
    assert_eq!((r.outcome, r.affected, r.fetched), (Some(Outcome::Write), 3, 0));
    drop(writer.join());
}
