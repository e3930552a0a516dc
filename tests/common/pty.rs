//! The real binary in a real pseudo-terminal, read through a terminal emulator (vt100), so a
//! test sees exactly what an operator would see.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

/// Where the binaries the tests start write their logs: under the build directory, so test
/// runs leave nothing behind in the system's temp dir.
pub fn console_log_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console-logs")
}

const BINARY: &str = env!("CARGO_BIN_EXE_bootstrap-console");

/// What the emulator saw besides the screen: titles set and clipboard writes (OSC 52).
#[derive(Default)]
pub struct Seen {
    pub titles: Vec<Vec<u8>>,
    pub clipboard: Vec<Vec<u8>>,
}

pub struct Recorder(Arc<Mutex<Seen>>);

impl vt100::Callbacks for Recorder {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0.lock().expect("seen").titles.push(title.to_vec());
    }

    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _ty: &[u8], data: &[u8]) {
        self.0.lock().expect("seen").clipboard.push(data.to_vec());
    }
}

/// A running console in a pseudo-terminal.
pub struct Console {
    parser: Arc<Mutex<vt100::Parser<Recorder>>>,
    pub seen: Arc<Mutex<Seen>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
}

impl Console {
    /// Starts `bootstrap-console <args>` in a `cols`×`rows` terminal.
    pub fn start(args: &[&str], envs: &[(&str, &str)], cols: u16, rows: u16) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut command = CommandBuilder::new(BINARY);
        command.args(args);
        command.env("TERM", "xterm-256color");
        command.env_remove("DATABASE_URL");
        command.env("BOOTSTRAP_CONSOLE_LOG_DIR", console_log_dir());
        for (key, value) in envs {
            command.env(key, value);
        }
        let child = pair
            .slave
            .spawn_command(command)
            .expect("spawn the console");
        drop(pair.slave);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let parser = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            NonZeroU16::new(rows).expect("rows"),
            NonZeroU16::new(cols).expect("cols"),
            0,
            Recorder(seen.clone()),
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let (feed, bytes) = (parser.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                feed.lock().expect("parser").process(&buffer[..n]);
                bytes.lock().expect("raw").extend_from_slice(&buffer[..n]);
            }
        });
        let writer = pair.master.take_writer().expect("writer");
        Self {
            parser,
            seen,
            raw,
            writer,
            child,
            _master: pair.master,
        }
    }

    pub fn screen(&self) -> String {
        self.parser.lock().expect("parser").screen().contents()
    }

    /// The screen as an SVG picture.
    pub fn svg(&self, title: &str) -> String {
        super::svg::render(self.parser.lock().expect("parser").screen(), title)
    }

    pub fn alternate_screen(&self) -> bool {
        self.parser
            .lock()
            .expect("parser")
            .screen()
            .alternate_screen()
    }

    /// Everything the console wrote to the terminal so far.
    pub fn raw_output(&self) -> Vec<u8> {
        self.raw.lock().expect("raw").clone()
    }

    /// Waits until `check` holds for the screen text; panics with the screen on timeout.
    pub fn wait_until(&self, what: &str, secs: u64, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_for(&self, text: &str, secs: u64) -> String {
        self.wait_until(&format!("{text:?}"), secs, |screen| screen.contains(text))
    }

    /// Types keys (a pause after each batch lets the console read them as separate keys).
    pub fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush keys");
        std::thread::sleep(Duration::from_millis(150));
    }

    /// Types keys without pausing (for timing how fast the screen answers).
    pub fn send_now(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("write keys");
        self.writer.flush().expect("flush keys");
    }

    /// Waits for the process to exit; returns its exit code.
    pub fn wait_exit(&mut self, secs: u64) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // Let the reader drain the last bytes (the terminal restore).
                std::thread::sleep(Duration::from_millis(200));
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "the console did not exit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}
