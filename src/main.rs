use std::io::Write;
use std::process::ExitCode;

use versus::cli::output;

fn main() -> ExitCode {
    versus::interrupt::install();
    output::install_hook();
    let result = std::panic::catch_unwind(|| versus::cli::run(std::env::args().collect()));
    match result {
        Ok(Ok(code)) => ExitCode::from(code.clamp(0, 255) as u8),
        Ok(Err(e)) => {
            // stderr may be closed too: nothing more to say then.
            let _ = writeln!(std::io::stderr(), "versus: error: {e}");
            ExitCode::from(if matches!(e, versus::Error::Interrupted) { 130 } else { 1 })
        }
        Err(payload) if output::is_closed_output(payload.as_ref()) => ExitCode::from(output::CLOSED_OUTPUT_EXIT),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}
