//! The `bootstrap-console` binary: parse the command line, install the error hooks, dispatch.

use std::process::ExitCode;

use bootstrap_console::cli;

fn main() -> ExitCode {
    if let Err(e) = color_eyre::install() {
        eprintln!("bootstrap-console: could not install the error reporter: {e}");
    }
    let cli = cli::parse();
    // Held until exit so the last log lines are flushed.
    let _log = bootstrap_console::logging::init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("bootstrap-console: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(cli)) {
        Ok(code) => code,
        Err(failure) => {
            // Failures carry server messages and names from the database: defused like any
            // other text from it.
            let sentence = bootstrap_console::domain::text::clean(&failure.to_string(), 2000);
            // Never a panic for a terminal that went away: a panic there aborts.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "bootstrap-console: {sentence}");
            failure.exit_code()
        }
    }
}
