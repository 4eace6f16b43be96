//! Output to a closed stdout or stderr (`versus runs | head`, `versus show 1 >&-`): the write fails and
//! the standard print macros panic. This is the one place that turns that into a quiet end, for every
//! command: no message, no backtrace, exit status 141 (what a shell shows for a tool stopped by
//! SIGPIPE). The panic unwinds, so servers versus started are stopped on the way out, and whatever was
//! measured was stored before it was printed.

use std::any::Any;
use std::io::{ErrorKind, Write};

use crate::error::{Error, Result};

/// The exit status after output to a closed stream.
pub const CLOSED_OUTPUT_EXIT: u8 = 141;

/// Installs the panic hook that keeps quiet about closed output (other panics print as before).
pub fn install_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_closed_output(info.payload()) {
            default(info);
        }
    }));
}

/// Writes `text` to stdout and flushes it. A closed stdout ends versus as the print macros do (quietly,
/// exit status 141, servers stopped on the way out); any other failure is an error.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => std::panic::panic_any(format!("failed printing to stdout: {e}")),
        Err(e) => Err(Error::Other(format!("cannot write to standard output: {e}"))),
    }
}

/// True when a panic's payload is a print macro's failure to write to stdout or stderr.
pub fn is_closed_output(payload: &(dyn Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    ["failed printing to stdout", "failed printing to stderr"].iter().any(|m| message.starts_with(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_print_failures_count() {
        let closed: Box<dyn Any + Send> =
            Box::new(String::from("failed printing to stdout: Broken pipe (os error 32)"));
        assert!(is_closed_output(closed.as_ref()));
        let bug: Box<dyn Any + Send> = Box::new("index out of bounds");
        assert!(!is_closed_output(bug.as_ref()));
    }
}
