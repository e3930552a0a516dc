//! The highest timeline this console has written to, per cluster (system identifier), kept in
//! `timelines` in the console's state directory (where its log is, 0700; the file 0600): a
//! primary found later on a lower timeline of the same cluster is an old primary, however it
//! was reached — one host in the URL, or a virtual IP that moved back.
//!
//! One line per cluster, `SYSTEM_ID TIMELINE` (hex, as PostgreSQL names WAL files). Consoles
//! sharing the directory update the file under an exclusive `flock`, each keeping the higher
//! timeline of what the file says and what it wrote. A file that cannot be read or written
//! weakens the guard but never stops an action: that is logged, and the other checks (several
//! primaries, other clusters) still hold.

use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

use super::lineage::Lineage;

const FILE: &str = "timelines";

fn path() -> PathBuf {
    crate::logging::log_dir().join(FILE)
}

/// The highest timeline written to in the cluster `system_id`, as the file says (read under a
/// shared lock: never half-written). A file that is not this user's, or that others may
/// write, is not believed (it is logged): anyone could otherwise block every action, or blank
/// the record.
pub(crate) fn highest(system_id: i64) -> Option<u32> {
    let text = match read() {
        Ok(text) => text?,
        Err(e) => {
            warn_once(format!("{} is not used: {e}", path().display()));
            return None;
        }
    };
    let (kept, skipped) = parse_counting(&text);
    if skipped > 0 {
        warn_once(format!(
            "{}: {skipped} line(s) not understood, skipped",
            path().display()
        ));
    }
    kept.get(&system_id).copied()
}

/// Logs `said` unless it was the last thing said of the file: the guard reads it every 15 s.
fn warn_once(said: String) {
    static LAST: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if last.as_deref() != Some(said.as_str()) {
        tracing::warn!("{said}");
        *last = Some(said);
    }
}

/// How long a console waits for another one that holds the file: a console stopped while it
/// holds it (Ctrl-Z) must not stop this one's actions. Past it, the record is passed over, as
/// when the file cannot be read.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// `file` locked as `how`, waited for at most [`LOCK_WAIT`].
fn locked(
    file: std::fs::File,
    how: nix::fcntl::FlockArg,
) -> std::io::Result<nix::fcntl::Flock<std::fs::File>> {
    let started = std::time::Instant::now();
    let mut file = file;
    loop {
        match nix::fcntl::Flock::lock(file, how) {
            Ok(locked) => return Ok(locked),
            Err((back, nix::errno::Errno::EWOULDBLOCK)) if started.elapsed() < LOCK_WAIT => {
                file = back;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err((_, errno)) => return Err(std::io::Error::from(errno)),
        }
    }
}

fn read() -> std::io::Result<Option<String>> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path())
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if meta.uid() != nix::unistd::geteuid().as_raw() || meta.mode() & 0o022 != 0 {
        return Err(std::io::Error::other(
            "it belongs to another user, or others may write it",
        ));
    }
    let mut lock = locked(file, nix::fcntl::FlockArg::LockSharedNonblock)?;
    let mut text = String::new();
    lock.read_to_string(&mut text)?;
    Ok(Some(text))
}

/// Records that `lineage` was written to (kept when higher than what the file holds).
pub(crate) fn note(lineage: Lineage) {
    if let Err(e) = note_in(lineage) {
        tracing::warn!(
            "could not record timeline {:08X} of system {} in {}: {e} (an old primary on a \
             lower timeline is then refused only when another listed host is the primary)",
            lineage.timeline,
            lineage.system_id,
            path().display()
        );
    }
}

fn note_in(lineage: Lineage) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    let file = crate::logging::private_file(&crate::logging::log_dir(), FILE, &mut options)?;
    let mut file = locked(file, nix::fcntl::FlockArg::LockExclusiveNonblock)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let mut kept = parse(&text);
    if kept
        .get(&lineage.system_id)
        .is_some_and(|&timeline| timeline >= lineage.timeline)
    {
        // Nothing new: the file is not rewritten.
        return Ok(());
    }
    kept.insert(lineage.system_id, lineage.timeline);
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(render(&kept).as_bytes())?;
    file.sync_data()?;
    Ok(())
}

/// The file's lines; a line that does not parse is skipped (it is rewritten without it).
fn parse(text: &str) -> BTreeMap<i64, u32> {
    parse_counting(text).0
}

/// [`parse`], and how many lines were skipped.
fn parse_counting(text: &str) -> (BTreeMap<i64, u32>, usize) {
    let mut kept = BTreeMap::new();
    let mut skipped = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split_whitespace();
        if let (Some(system), Some(timeline), None) = (fields.next(), fields.next(), fields.next())
            && let (Ok(system), Ok(timeline)) =
                (system.parse::<i64>(), u32::from_str_radix(timeline, 16))
        {
            let entry = kept.entry(system).or_insert(timeline);
            *entry = (*entry).max(timeline);
        } else {
            skipped += 1;
        }
    }
    (kept, skipped)
}

fn render(kept: &BTreeMap<i64, u32>) -> String {
    kept.iter()
        .map(|(system, timeline)| format!("{system} {timeline:08X}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_keeps_the_highest_timeline_per_system_and_skips_what_it_cannot_read() {
        let (kept, skipped) =
            parse_counting("7 00000002\n7 00000001\n-3 0000000A\nnot a line\n8 xyz\n");
        assert_eq!(skipped, 2);
        assert_eq!(kept.get(&7), Some(&2));
        assert_eq!(kept.get(&-3), Some(&10));
        assert_eq!(kept.len(), 2);
        assert_eq!(parse(&render(&kept)), kept);
    }
}
