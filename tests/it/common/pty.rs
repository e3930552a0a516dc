//! The real binary in a real pseudo-terminal, read through a terminal emulator (vt100), so a
//! test sees exactly what an operator would see.

use std::io::Write;
use std::num::NonZeroU16;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

/// Where the binaries the tests start write their logs: under the build directory, so test
/// runs leave nothing behind in the system's temp dir.
pub fn console_log_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console-logs")
}

const BINARY: &str = env!("CARGO_BIN_EXE_bootstrap-console");

/// An owned copy of the pseudo-terminal's master descriptor (the library hands out only its
/// number), closed on exec: a process another test starts meanwhile must not inherit it, or
/// the master side never fully closes and a hang-up never happens.
#[allow(unsafe_code)]
fn own_copy(master: std::os::fd::RawFd) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: `master` is the open descriptor of a `MasterPty` the caller holds for the whole
    // call; it is only borrowed to be duplicated.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(master) };
    let copy = nix::fcntl::fcntl(borrowed, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(0))
        .expect("dup the master side");
    // SAFETY: `copy` is a new descriptor that nothing else owns.
    unsafe { std::os::fd::OwnedFd::from_raw_fd(copy) }
}

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
    writer: Option<Box<dyn Write + Send>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    master: Option<Box<dyn MasterPty + Send>>,
    /// Tells the reader to close its copy of the master side (see [`Console::hang_up`]).
    stop_reading: Arc<AtomicBool>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Console {
    /// Starts `bootstrap-console <args>` in a `cols`×`rows` terminal.
    pub fn start(args: &[&str], envs: &[(&str, &str)], cols: u16, rows: u16) -> Self {
        Self::start_program(BINARY, args, envs, cols, rows)
    }

    /// The console's binary path, for a shell started with [`Console::start_program`].
    pub fn binary() -> &'static str {
        BINARY
    }

    /// Starts `program <args>` in a `cols`×`rows` terminal (an interactive shell, say, to
    /// run the console under job control as an operator does).
    pub fn start_program(
        program: &str,
        args: &[&str],
        envs: &[(&str, &str)],
        cols: u16,
        rows: u16,
    ) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut command = CommandBuilder::new(program);
        command.args(args);
        command.env("TERM", "xterm-256color");
        // A UTF-8 locale, whatever the machine running the tests has (a test may override).
        command.env("LANG", "C.UTF-8");
        command.env_remove("LC_ALL");
        command.env_remove("LC_CTYPE");
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
        // The reader reads its own copy of the master side, without blocking, so that it can
        // close it when told: a hang-up needs every copy closed.
        let fd = own_copy(pair.master.as_raw_fd().expect("a master fd"));
        nix::fcntl::fcntl(
            &fd,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .expect("non-blocking reads");
        let stop_reading = Arc::new(AtomicBool::new(false));
        let (feed, bytes, stop) = (parser.clone(), raw.clone(), stop_reading.clone());
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while !stop.load(Ordering::Relaxed) {
                match nix::unistd::read(&fd, &mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        feed.lock().expect("parser").process(&buffer[..n]);
                        bytes.lock().expect("raw").extend_from_slice(&buffer[..n]);
                    }
                    Err(nix::errno::Errno::EAGAIN) => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(_) => break,
                }
            }
            // `fd` is dropped here: this copy of the master side is closed.
        });
        let writer = pair.master.take_writer().expect("writer");
        Self {
            parser,
            seen,
            raw,
            writer: Some(writer),
            child,
            master: Some(pair.master),
            stop_reading,
            reader: Some(reader),
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

    pub fn cursor_hidden(&self) -> bool {
        self.parser.lock().expect("parser").screen().hide_cursor()
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

    /// Waits until `text` shows and the first snapshot is in (the header shows at once, the
    /// rows only then): keys sent after it act on the board.
    pub fn wait_ready(&self, text: &str, secs: u64) -> String {
        self.wait_until(
            &format!("{text:?} and the first snapshot"),
            secs,
            |screen| screen.contains(text) && !screen.contains("waiting for the first snapshot"),
        )
    }

    pub fn wait_for(&self, text: &str, secs: u64) -> String {
        self.wait_until(&format!("{text:?}"), secs, |screen| screen.contains(text))
    }

    /// Types keys (a pause after each batch lets the console read them as separate keys).
    pub fn send(&mut self, keys: &str) {
        self.send_now(keys);
        std::thread::sleep(Duration::from_millis(150));
    }

    /// Fills in an open action dialog for one space: the reason, Enter (the cursor moves to
    /// the confirmation), `y`, Enter.
    pub fn reason_and_yes(&mut self, reason: &str) {
        self.send(reason);
        self.send("\r");
        self.send("y");
        self.send("\r");
    }

    /// Types keys without pausing (for timing how fast the screen answers).
    pub fn send_now(&mut self, keys: &str) {
        let writer = self.writer.as_mut().expect("the terminal is open");
        // The master side is non-blocking (see the reader): a full input buffer waits.
        let mut rest = keys.as_bytes();
        while !rest.is_empty() {
            match writer.write(rest) {
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("write keys: {e}"),
            }
        }
        writer.flush().expect("flush keys");
    }

    /// Closes the terminal's master side, every copy of it, as sshd does when the client
    /// vanishes: the console gets SIGHUP, and reads and writes on its terminal fail.
    pub fn hang_up(&mut self) {
        self.stop_reading.store(true, Ordering::Relaxed);
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the reader ends");
        }
        self.writer = None;
        self.master = None;
    }

    /// Waits for the process to exit; returns its exit code.
    pub fn wait_exit(&mut self, secs: u64) -> u32 {
        self.wait_status(secs).exit_code()
    }

    /// Waits for the process to exit; returns how it ended (a signal included).
    pub fn wait_status(&mut self, secs: u64) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // Let the reader drain the last bytes (the terminal restore).
                std::thread::sleep(Duration::from_millis(200));
                return status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("the console did not exit:\n{}", self.screen());
            }
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
