//! The pictures in `assets/`: taken from a real run of `bootstrap-console demo` in a
//! pseudo-terminal. Every run checks that the board and the detail render as expected;
//! with `BOOTSTRAP_CONSOLE_WRITE_ASSETS=1` it also rewrites `assets/*.svg`:
//!
//! ```sh
//! BOOTSTRAP_CONSOLE_WRITE_ASSETS=1 cargo test --test it screenshots
//! ```

use crate::common;

use common::pty::Console;

const WRITE: &str = "BOOTSTRAP_CONSOLE_WRITE_ASSETS";

fn keep(name: &str, svg: &str) {
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    if std::env::var_os(WRITE).is_some_and(|v| v == "1") {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets")
            .join(name);
        std::fs::write(&path, svg).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

#[test]
fn the_board_and_the_detail_of_a_demo_run() {
    let mut console = Console::start(
        &[
            "demo",
            "--seed",
            "7",
            "--tenants",
            "4",
            "--spaces",
            "12",
            "--item-failure-rate",
            "0.01",
            "--slow-rate",
            "0.02",
        ],
        &[],
        120,
        36,
    );
    console.wait_for("SANDBOX", 60);
    console.wait_until("a failed space and running workers", 120, |s| {
        s.contains("FAILED") && s.contains(" run ")
    });
    let board = console.screen();
    assert!(
        board.contains("READ-WRITE") && board.contains("readable"),
        "{board}"
    );
    keep("board.svg", &console.svg("bootstrap-console: the board"));

    // The first row is the failed space (attention order): open it.
    console.send("g");
    console.send("\r");
    let detail = console.wait_for("── bootstrap", 20);
    console.wait_for("last error", 20);
    assert!(detail.contains("failed"), "{detail}");
    keep(
        "detail.svg",
        &console.svg("bootstrap-console: the detail of a failed space"),
    );

    console.send("q");
    assert_eq!(console.wait_exit(30), 0);
}
