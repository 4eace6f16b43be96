//! A small HTTP server on 127.0.0.1 laid out like the vendors' download sites, for tests of fetching from
//! the vendors' archives without network: GET with `Range`, HEAD, 404, and connections dropped mid-file
//! on demand. It runs until dropped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server has and how it misbehaves.
#[derive(Default)]
struct State {
    /// URL path (with query) → file served there.
    files: HashMap<String, PathBuf>,
    /// URL path → how many more full GETs are cut off halfway.
    drops: HashMap<String, usize>,
    /// Every request as `METHOD PATH [Range]`.
    log: Vec<String>,
}

/// A running mirror.
pub struct Mirror {
    pub port: u16,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Mirror {
    /// Starts a mirror with nothing on it.
    pub fn start() -> Mirror {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let s = s.clone();
                        std::thread::spawn(move || {
                            let _ = serve(conn, &s);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Mirror { port, state, stop, thread: Some(thread) }
    }

    /// The mirror's root URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Serves `file` at `path` (`/archives/mysql-9.7/x.tar.xz`, or with a query string).
    pub fn put(&self, path: &str, file: impl Into<PathBuf>) {
        self.state.lock().unwrap().files.insert(path.to_string(), file.into());
    }

    /// Takes `path` away again (it answers 404).
    pub fn remove(&self, path: &str) {
        self.state.lock().unwrap().files.remove(path);
    }

    /// Cuts off the next `times` downloads of `path` (whole or from a `Range`) halfway through what they
    /// asked for: the connection is closed.
    pub fn drop_midway(&self, path: &str, times: usize) {
        self.state.lock().unwrap().drops.insert(path.to_string(), times);
    }

    /// The requests so far.
    pub fn requests(&self) -> Vec<String> {
        self.state.lock().unwrap().log.clone()
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(conn: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut range = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.trim().eq_ignore_ascii_case("range")
        {
            range = v.trim().strip_prefix("bytes=").and_then(|r| r.trim_end_matches('-').parse::<u64>().ok());
        }
    }
    let mut words = request.split_whitespace();
    let (method, path) = (words.next().unwrap_or("").to_string(), words.next().unwrap_or("").to_string());
    let (file, drop) = {
        let mut s = state.lock().unwrap();
        s.log.push(match range {
            Some(r) => format!("{method} {path} Range:{r}"),
            None => format!("{method} {path}"),
        });
        let file = s.files.get(&path).cloned();
        let drop = method == "GET" && s.drops.get(&path).is_some_and(|n| *n > 0);
        if drop {
            *s.drops.get_mut(&path).unwrap() -= 1;
        }
        (file, drop)
    };
    let mut out = conn;
    let Some(file) = file else {
        let body = "not found\n";
        write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())?;
        return Ok(());
    };
    let mut f = std::fs::File::open(&file)?;
    let len = f.metadata()?.len();
    let start = range.unwrap_or(0);
    if start > len || (range.is_some() && start == len) {
        write!(
            out,
            "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        return Ok(());
    }
    if range.is_some() {
        write!(
            out,
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {start}-{}/{len}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            len - 1,
            len - start
        )?;
    } else {
        write!(out, "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")?;
    }
    if method == "HEAD" {
        return Ok(());
    }
    f.seek(SeekFrom::Start(start))?;
    let limit = if drop { (len - start) / 2 } else { len - start };
    std::io::copy(&mut (&mut f).take(limit), &mut out)?;
    out.flush()?;
    if drop {
        let _ = out.shutdown(std::net::Shutdown::Both);
    }
    Ok(())
}
