use std::process::ExitCode;

fn main() -> ExitCode {
    versus::interrupt::install();
    match versus::cli::run(std::env::args().collect()) {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("versus: error: {e}");
            ExitCode::from(if matches!(e, versus::Error::Interrupted) { 130 } else { 1 })
        }
    }
}
