//! Finding the PostgreSQL server binaries (`initdb`, `postgres`) on this machine.
//!
//! Distributions keep them off `PATH` (Debian: `/usr/lib/postgresql/<major>/bin`), so the search
//! goes `PATH` → `pg_config --bindir` → the highest `/usr/lib/postgresql/*/bin`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::SandboxError;

/// Names the one directory to take the server binaries from, skipping the search.
pub const BINDIR_OVERRIDE: &str = "BOOTSTRAP_CONSOLE_PG_BINDIR";

/// A directory holding both `initdb` and `postgres`.
#[derive(Debug, Clone)]
pub struct ServerBinaries {
    bindir: PathBuf,
}

impl ServerBinaries {
    /// `BOOTSTRAP_CONSOLE_PG_BINDIR` when set (for unusual installs), otherwise the usual
    /// places; the error tells the user what to install.
    pub fn locate() -> Result<Self, SandboxError> {
        if let Some(dir) = std::env::var_os(BINDIR_OVERRIDE).filter(|d| !d.is_empty()) {
            return Self::in_dir(Path::new(&dir)).ok_or(SandboxError::NoServerBinaries);
        }
        let candidates = path_dirs()
            .into_iter()
            .chain(pg_config_bindir())
            .chain(debian_bindirs());
        for dir in candidates {
            if let Some(found) = Self::in_dir(&dir) {
                return Ok(found);
            }
        }
        Err(SandboxError::NoServerBinaries)
    }

    /// Uses `dir` if it holds the server binaries.
    pub(crate) fn in_dir(dir: &Path) -> Option<Self> {
        let complete = ["initdb", "postgres"]
            .iter()
            .all(|name| dir.join(name).is_file());
        complete.then(|| Self {
            bindir: dir.to_path_buf(),
        })
    }

    pub(crate) fn initdb(&self) -> PathBuf {
        self.bindir.join("initdb")
    }

    pub(crate) fn postgres(&self) -> PathBuf {
        self.bindir.join("postgres")
    }

    /// For a streaming standby's first copy: from the same server package as `postgres`
    /// (beside it, or beside what a link to it points at), else from `PATH`.
    pub(crate) fn pg_basebackup(&self) -> PathBuf {
        let name = "pg_basebackup";
        let beside_target = std::fs::canonicalize(self.postgres())
            .ok()
            .and_then(|real| real.parent().map(|dir| dir.join(name)));
        [Some(self.bindir.join(name)), beside_target]
            .into_iter()
            .flatten()
            .find(|path| path.is_file())
            .unwrap_or_else(|| PathBuf::from(name))
    }
}

fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default()
}

fn pg_config_bindir() -> Option<PathBuf> {
    let output = Command::new("pg_config").arg("--bindir").output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    Some(PathBuf::from(text.trim()))
}

/// `/usr/lib/postgresql/<major>/bin`, newest major first.
fn debian_bindirs() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") else {
        return Vec::new();
    };
    let mut majors: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let major = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((major, entry.path().join("bin")))
        })
        .collect();
    majors.sort_by_key(|(major, _)| std::cmp::Reverse(*major));
    majors.into_iter().map(|(_, dir)| dir).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_the_server_is_not_accepted() {
        let empty = tempfile::tempdir().expect("temp dir");
        assert!(ServerBinaries::in_dir(empty.path()).is_none());
    }

    #[test]
    fn a_directory_with_initdb_and_postgres_is_accepted() {
        let dir = tempfile::tempdir().expect("temp dir");
        for name in ["initdb", "postgres"] {
            std::fs::write(dir.path().join(name), b"").expect("write");
        }
        let found = ServerBinaries::in_dir(dir.path()).expect("accepted");
        assert_eq!(found.postgres(), dir.path().join("postgres"));
    }
}
