//! The password file, read as sqlx reads it when it connects (`PGPASSFILE`, then
//! `~/.pgpass`; `host:port:database:user:password` lines, `*` matching anything, `\` escaping
//! `:` and `\`): so the console can say whether a refused password came from there, and look
//! the password up again for a user it chose itself (the operating system's, as psql does).

use std::path::PathBuf;

/// A line of a password file that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) file: PathBuf,
    pub(crate) password: String,
    /// The file may be read by others, so it is not used (as libpq and sqlx refuse it).
    pub(crate) ignored: bool,
}

/// Where the connection looks, in order.
pub(crate) fn files() -> Vec<PathBuf> {
    let custom = std::env::var_os("PGPASSFILE")
        .filter(|f| !f.is_empty())
        .map(PathBuf::from);
    // As sqlx: `HOME`, else the user's home directory from the password database.
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::geteuid())
                .ok()
                .flatten()
                .map(|user| user.dir)
        })
        .map(|home| home.join(".pgpass"));
    custom.into_iter().chain(home).collect()
}

/// The entry the connection uses for this host, port, database and user (sqlx keys a
/// connection that names no database as `""`): the first match in a file others may not read,
/// in the order [`files`] gives. Failing that, the first match in a file that is ignored for
/// being readable by others, marked [`Entry::ignored`], so the operator can be told why.
pub(crate) fn lookup(host: &str, port: u16, database: &str, user: &str) -> Option<Entry> {
    use std::os::unix::fs::PermissionsExt;
    let found: Vec<Entry> = files()
        .into_iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(&file).ok()?;
            let password = find(&text, [host, &port.to_string(), database, user])?;
            let mode = std::fs::metadata(&file).ok()?.permissions().mode();
            Some(Entry {
                file,
                password,
                ignored: mode & 0o077 != 0,
            })
        })
        .collect();
    let used = found.iter().position(|entry| !entry.ignored).unwrap_or(0);
    found.into_iter().nth(used)
}

/// The password of the first line whose four fields match `wanted`.
fn find(text: &str, wanted: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split(line);
            let [host, port, database, user, password] = fields.as_slice() else {
                return None;
            };
            let matches = [host, port, database, user]
                .iter()
                .zip(wanted)
                .all(|(field, wanted)| field.as_str() == "*" || field.as_str() == wanted);
            matches.then(|| password.clone())
        })
}

/// A line's fields, `\:` and `\\` unescaped; the password is the rest of the line.
fn split(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn the_first_matching_line_gives_the_password_with_wildcards_and_escapes() {
        let file = "# comment\n\
                    db.internal:5432:platform:ops:first\n\
                    *:*:platform:ops:second\n\
                    localhost:*:*:*:p\\:w\\\\d:tail\n";
        assert_eq!(
            find(file, ["db.internal", "5432", "platform", "ops"]),
            Some("first".into())
        );
        assert_eq!(
            find(file, ["db-b", "6432", "platform", "ops"]),
            Some("second".into())
        );
        assert_eq!(
            find(file, ["localhost", "5432", "other", "alice"]),
            Some("p:w\\d:tail".into())
        );
        assert_eq!(find(file, ["db-b", "5432", "other", "alice"]), None);
        assert_eq!(
            find("too:few:fields\n", ["too", "few", "fields", "x"]),
            None
        );
    }
}
