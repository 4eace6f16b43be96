use std::io::Write;
use std::process::ExitCode;

use versus::cli::output;

fn main() -> ExitCode {
    // A trace on stderr for whoever asks for one (RUST_LOG=versus=debug: downloads, package-tool calls,
    // server command lines); nothing otherwise.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    }
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
