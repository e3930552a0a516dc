//! Connection services, as libpq keeps them: `service=NAME` (or `PGSERVICE`) names a section
//! of a service file, whose `key=value` lines are connection keywords.
//!
//! The per-user file is `PGSERVICEFILE`, else `~/.pg_service.conf`; then the system-wide
//! `pg_service.conf` in `PGSYSCONFDIR`, else `/etc/postgresql-common` (where Debian's libpq
//! looks). The first file that defines the service is used, as libpq does. Keywords given
//! beside `service=` win over the service's.

use std::path::PathBuf;

/// The keywords of service `name`, in file order.
pub(crate) fn keywords(
    name: &str,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    let mut looked = Vec::new();
    for file in files(&var) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            looked.push(file.display().to_string());
            continue;
        };
        if let Some(found) = section(&text, name).map_err(|e| format!("{}: {e}", file.display()))? {
            return Ok(found);
        }
        looked.push(file.display().to_string());
    }
    Err(format!(
        "no service {name:?} is defined (looked in {})",
        looked.join(", ")
    ))
}

/// The service files, in the order libpq reads them.
fn files(var: &impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let user = var("PGSERVICEFILE")
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".pg_service.conf")));
    let system = var("PGSYSCONFDIR")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/etc/postgresql-common".into());
    user.into_iter()
        .chain([PathBuf::from(system).join("pg_service.conf")])
        .collect()
}

/// The `key=value` lines of section `[name]`; `None` when the file has no such section.
fn section(text: &str, name: &str) -> Result<Option<Vec<(String, String)>>, String> {
    let mut found: Option<Vec<(String, String)>> = None;
    let mut inside = false;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            if found.is_some() && inside {
                break;
            }
            inside = header.strip_suffix(']').map(str::trim) == Some(name);
            if inside {
                found = Some(Vec::new());
            }
            continue;
        }
        if !inside {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {} is not key=value", number + 1));
        };
        let key = key.trim();
        if key == "service" {
            return Err(format!(
                "line {}: a service cannot name a service",
                number + 1
            ));
        }
        if let Some(pairs) = found.as_mut() {
            pairs.push((key.to_string(), value.trim().to_string()));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_read_from_the_first_file_that_defines_it() {
        let dir = tempfile::tempdir().expect("dir");
        let user = dir.path().join("user.conf");
        std::fs::write(
            &user,
            "# mine\n[other]\nhost=x\n\n[platform]\nhost = db-a,db-b\nport=5432\ndbname=platform\n",
        )
        .expect("write");
        std::fs::create_dir(dir.path().join("etc")).expect("mkdir");
        std::fs::write(
            dir.path().join("etc/pg_service.conf"),
            "[shared]\nhost=/tmp/s\n",
        )
        .expect("write");
        let env = |name: &str| match name {
            "PGSERVICEFILE" => Some(user.display().to_string()),
            "PGSYSCONFDIR" => Some(dir.path().join("etc").display().to_string()),
            _ => None,
        };
        assert_eq!(
            keywords("platform", env).expect("found"),
            [
                ("host".to_string(), "db-a,db-b".to_string()),
                ("port".into(), "5432".into()),
                ("dbname".into(), "platform".into())
            ]
        );
        assert_eq!(
            keywords("shared", env).expect("found"),
            [("host".to_string(), "/tmp/s".to_string())]
        );
        let missing = keywords("nowhere", env).expect_err("not defined");
        assert!(
            missing.contains("no service \"nowhere\" is defined"),
            "{missing}"
        );
        assert!(missing.contains("user.conf"), "{missing}");
    }
}
