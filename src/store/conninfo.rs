//! Connection strings in libpq's other spellings, turned into the URL form the rest of the
//! console reads: keyword/value strings (`host=a,b port=5432 dbname=platform user=ops`), and
//! `PGHOST`/`PGPORT` listing several hosts. sqlx reads neither: it takes URLs only, and one
//! host.

/// The keywords understood, which are the ones a URL's query may carry. Others are refused
/// rather than ignored: a setting an operator wrote and the console dropped would surprise.
const KEYWORDS: &[&str] = &[
    "host",
    "port",
    "dbname",
    "user",
    "password",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "application_name",
    "options",
    "target_session_attrs",
    "service",
];

/// The parameters a URL's query may carry: the keywords above as sqlx spells them too.
const URL_PARAMETERS: &[&str] = &[
    "host",
    "port",
    "dbname",
    "user",
    "password",
    "sslmode",
    "ssl-mode",
    "sslrootcert",
    "ssl-root-cert",
    "ssl-ca",
    "sslcert",
    "ssl-cert",
    "sslkey",
    "ssl-key",
    "application_name",
    "options",
    "statement-cache-capacity",
    "service",
];

/// Refuses what sqlx would ignore or misread in a URL's query: an unknown parameter (it would
/// be dropped with a log line quoting its value), `hostaddr` (see [`to_url`]), and a port
/// that is not a number.
pub(crate) fn check_url_parameters(url: &str) -> Result<(), String> {
    let query = url.split_once('?').map_or("", |(_, query)| query);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key);
        if key == "hostaddr" {
            return Err(HOSTADDR.into());
        }
        if key.starts_with("options[") {
            continue;
        }
        if key == "target_session_attrs" {
            check_session_attrs(&decode(value))?;
            continue;
        }
        if !URL_PARAMETERS.contains(&key.as_str()) {
            return Err(format!(
                "unknown connection parameter {key:?} (the console understands {})",
                KEYWORDS.join(", ")
            ));
        }
        if key == "port" {
            check_ports(&decode(value))?;
        }
    }
    // Ports in the authority (`host:port`).
    let authority = url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?']).next().unwrap_or_default())
        .unwrap_or_default();
    let hosts = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    for host in hosts.split(',') {
        if let Some((_, port)) = host.rsplit_once(':')
            && !host.ends_with(']')
        {
            check_ports(port)?;
        }
    }
    Ok(())
}

/// `target_session_attrs` asking for what the console does anyway.
fn check_session_attrs(value: &str) -> Result<(), String> {
    if matches!(value, "read-write" | "primary" | "any") {
        return Ok(());
    }
    Err(format!(
        "target_session_attrs={value} is not supported: --database-url uses the primary among \
         its hosts, --read-url the first standby among its"
    ))
}

/// Every port of a list is a number.
fn check_ports(ports: &str) -> Result<(), String> {
    for port in ports.split(',') {
        if port.parse::<u16>().is_err() {
            return Err(format!("port {port:?} is not a port number"));
        }
    }
    Ok(())
}

const HOSTADDR: &str =
    "hostaddr is not supported: name the host, whose name the certificate is checked against";

/// Whether `text` is a keyword/value connection string rather than a URL (libpq tells them
/// apart by the URL's scheme).
pub(crate) fn is_keyword_value(text: &str) -> bool {
    let text = text.trim_start();
    !text.starts_with("postgres://") && !text.starts_with("postgresql://") && text.contains('=')
}

/// The URL that says what the keyword/value string `text` says. `target_session_attrs` is
/// taken when it asks for what the console does anyway — act on the primary among the hosts
/// (`read-write`, `primary`, `any`) — and refused otherwise.
pub(crate) fn to_url(text: &str) -> Result<String, String> {
    to_url_with(text, |name| std::env::var(name).ok())
}

/// [`to_url`], with the environment `var` reads (for the service file's location).
pub(crate) fn to_url_with(
    text: &str,
    var: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut query = Vec::new();
    for (key, value) in with_service(pairs(text)?, &var)? {
        if key == "hostaddr" {
            // sqlx would connect to the address *and* check the certificate against it.
            return Err(
                "hostaddr is not supported: name the host, whose name the certificate \
                        is checked against"
                    .into(),
            );
        }
        if !KEYWORDS.contains(&key.as_str()) {
            return Err(format!(
                "unknown connection keyword {key:?} (the console understands {})",
                KEYWORDS.join(", ")
            ));
        }
        if key == "target_session_attrs" {
            check_session_attrs(&value)?;
            continue;
        }
        // A host or port list stays a list: each entry is encoded on its own.
        let encoded = if key == "host" || key == "port" {
            value.split(',').map(encode).collect::<Vec<_>>().join(",")
        } else {
            encode(&value)
        };
        query.push(format!("{key}={encoded}"));
    }
    Ok(format!("postgres:///?{}", query.join("&")))
}

/// `given` with the keywords of the service it names (`service=`) before its own, which win.
fn with_service(
    mut given: Vec<(String, String)>,
    var: &impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    let Some(name) = given
        .iter()
        .rfind(|(key, _)| key == "service")
        .map(|(_, name)| name.clone())
    else {
        return Ok(given);
    };
    given.retain(|(key, _)| key != "service");
    let mut merged: Vec<(String, String)> = super::service::keywords(&name, var)?
        .into_iter()
        .filter(|(key, _)| !given.iter().any(|(own, _)| own == key))
        .collect();
    merged.append(&mut given);
    Ok(merged)
}

/// A URL whose query names a service (`postgres:///?service=platform`): the same URL with the
/// service's keywords as query parameters, except those the URL gives itself (in its query,
/// its user info, host list or path).
pub(crate) fn with_url_service(
    url: &str,
    var: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let (before_query, query) = url.split_once('?').unwrap_or((url, ""));
    let params: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), value.to_string())
        })
        .collect();
    let Some(name) = params
        .iter()
        .rfind(|(key, _)| key == "service")
        .map(|(_, name)| decode(name))
    else {
        return Ok(url.to_string());
    };
    let rest = before_query.split_once("://").map_or("", |(_, rest)| rest);
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (userinfo, hosts) = authority.rsplit_once('@').unwrap_or(("", authority));
    // What the URL itself says, keyword by keyword: `ops@` names a user and no password, and
    // `db/` a host and no port, so the service's password and port still apply (as libpq).
    let (user, password) = match userinfo.split_once(':') {
        Some((user, _)) => (!user.is_empty(), true),
        None => (!userinfo.is_empty(), false),
    };
    let port = hosts.split(',').any(|host| {
        host.rsplit_once(':')
            .is_some_and(|(_, port)| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
    });
    let in_url = |key: &str| match key {
        "host" => !hosts.is_empty(),
        "port" => port,
        "user" => user,
        "password" => password,
        "dbname" => !path.trim_start_matches('/').is_empty(),
        _ => false,
    };
    let mut query: Vec<String> = super::service::keywords(&name, var)?
        .into_iter()
        .filter(|(key, _)| !in_url(key) && !params.iter().any(|(own, _)| own == key))
        .map(|(key, value)| {
            let value = if key == "host" || key == "port" {
                value.split(',').map(encode).collect::<Vec<_>>().join(",")
            } else {
                encode(&value)
            };
            format!("{key}={value}")
        })
        .collect();
    query.extend(
        params
            .iter()
            .filter(|(key, _)| key != "service")
            .map(|(key, value)| format!("{}={value}", encode(key))),
    );
    Ok(format!("{before_query}?{}", query.join("&")))
}

/// The password a keyword/value string carries, to keep it out of error messages.
pub(crate) fn password(text: &str) -> Option<String> {
    pairs(text)
        .ok()?
        .into_iter()
        .find(|(key, _)| key == "password")
        .map(|(_, value)| value)
}

/// A URL for `PGHOST`/`PGPORT` when they list several hosts (`PGHOST=a,b`); `None` for one
/// host, which sqlx reads from the environment itself. The other `PG*` variables still apply.
pub(crate) fn pghost_list_url(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let hosts = var("PGHOST").filter(|h| h.contains(','));
    let ports = var("PGPORT").filter(|p| p.contains(','));
    if hosts.is_none() && ports.is_none() {
        return None;
    }
    let mut text = String::new();
    if let Some(hosts) = hosts.or_else(|| var("PGHOST")) {
        text.push_str(&format!("host='{}' ", quote(&hosts)));
    }
    if let Some(ports) = ports.or_else(|| var("PGPORT")) {
        text.push_str(&format!("port='{}'", quote(&ports)));
    }
    to_url(&text).ok()
}

/// The key/value pairs of a keyword/value string, as libpq reads them: `key = value` separated
/// by whitespace, a value in single quotes when it has spaces, `\'` and `\\` inside quotes.
/// Errors name keys, never values; a word right after an unquoted password may be the rest of
/// that password, so it is not quoted either.
fn pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(char::is_ascii_whitespace).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_ascii_whitespace()) {
            key.push(c);
        }
        while chars.next_if(char::is_ascii_whitespace).is_some() {}
        let after_password = pairs.last().is_some_and(|(k, _)| k == "password");
        if chars.next() != Some('=') {
            return Err(if after_password {
                "a word without a value follows password= (a password with spaces goes in \
                 single quotes)"
                    .into()
            } else {
                format!("{key:?} has no value (write {key}=value)")
            });
        }
        if after_password && !KEYWORDS.contains(&key.as_str()) {
            return Err(
                "an unknown keyword follows password= (a password with spaces goes in \
                        single quotes)"
                    .into(),
            );
        }
        while chars.next_if(char::is_ascii_whitespace).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(format!("the value of {key} has no closing quote")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_ascii_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
}

/// Everything but unreserved characters (and `/`, kept in socket paths) is percent-encoded.
const ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Percent-encodes everything but unreserved characters.
pub(crate) fn encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, ESCAPED).to_string()
}

/// Decodes `%XX` escapes (as in a URL's user info); anything else is kept as it is.
pub(crate) fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Quotes a value for a keyword/value string.
fn quote(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\'', "\\'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_value_strings_become_urls_with_their_host_lists_intact() {
        assert_eq!(
            to_url("host=db-a,db-b port=5432,5433 dbname=platform user=ops sslmode=verify-full")
                .expect("valid"),
            "postgres:///?host=db-a,db-b&port=5432,5433&dbname=platform&user=ops&sslmode=verify-full"
        );
        assert_eq!(
            to_url("host = /tmp/a password='abc").expect_err("refused"),
            "the value of password has no closing quote"
        );
        assert_eq!(
            to_url("host=/tmp/a password='it\\'s a&b' user=o\\ ps").expect("valid"),
            "postgres:///?host=/tmp/a&password=it%27s%20a%26b&user=o%20ps"
        );
        assert_eq!(password("user=x password='p w'").as_deref(), Some("p w"));
    }

    #[test]
    fn what_follows_an_unquoted_password_is_never_quoted_back() {
        for text in [
            "host=db password=correct horse battery",
            "host=db password=correct horse=battery",
        ] {
            let error = to_url(text).expect_err("refused");
            assert!(!error.contains("horse"), "{error}");
            assert!(error.contains("single quotes"), "{error}");
        }
        assert!(
            to_url("host=db hostaddr=10.0.0.5")
                .expect_err("refused")
                .contains("hostaddr is not supported")
        );
        assert_eq!(decode("p%40ss+w%2"), "p@ss+w%2");
    }

    #[test]
    fn unknown_keywords_and_standby_sessions_are_refused() {
        assert!(
            to_url("host=a bogus=1")
                .expect_err("refused")
                .contains("unknown connection keyword \"bogus\"")
        );
        assert!(to_url("host=a,b target_session_attrs=read-write").is_ok());
        assert!(
            to_url("host=a,b target_session_attrs=standby")
                .expect_err("refused")
                .contains("--read-url")
        );
        assert!(
            to_url("host")
                .expect_err("refused")
                .contains("has no value")
        );
    }

    #[test]
    fn only_a_listed_pghost_needs_a_url() {
        let env = |host: Option<&'static str>, port: Option<&'static str>| {
            move |name: &str| match name {
                "PGHOST" => host.map(str::to_string),
                "PGPORT" => port.map(str::to_string),
                _ => None,
            }
        };
        assert_eq!(pghost_list_url(env(Some("db"), Some("5432"))), None);
        assert_eq!(
            pghost_list_url(env(Some("/tmp/a,/tmp/b"), Some("5432"))).as_deref(),
            Some("postgres:///?host=/tmp/a,/tmp/b&port=5432")
        );
        // A port list needs as many hosts: refused with a sentence when the URL is split.
        let ports_only = pghost_list_url(env(Some("db"), Some("5432,5433"))).expect("a URL");
        assert!(
            super::super::hosts::single_host_urls(&ports_only)
                .expect_err("refused")
                .contains("1 host but 2 ports")
        );
    }

    #[test]
    fn urls_carry_only_parameters_the_console_reads() {
        assert!(
            check_url_parameters("postgres://u@h:5432/db?sslmode=require&options[x]=1").is_ok()
        );
        assert!(
            check_url_parameters("postgres://u@h/db?bogus=1")
                .expect_err("refused")
                .contains("unknown connection parameter \"bogus\"")
        );
        assert!(check_url_parameters("postgres://u@h/db?hostaddr=10.0.0.5").is_err());
        assert_eq!(
            check_url_parameters("postgres:///db?host=a,b&port=5432,abc").expect_err("refused"),
            "port \"abc\" is not a port number"
        );
        assert!(check_url_parameters("postgres://u@a:5432,b:x/db").is_err());
        assert!(check_url_parameters("postgres://u@[::1]:5432/db").is_ok());
    }

    #[test]
    fn a_service_supplies_what_the_string_or_url_does_not_say() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("services.conf");
        std::fs::write(
            &file,
            "[platform]\nhost=/tmp/a,/tmp/b\nport=6432\ndbname=platform\nuser=observer\n\
             password=s3cret\n",
        )
        .expect("write");
        let file = file.display().to_string();
        let env = |name: &str| (name == "PGSERVICEFILE").then(|| file.clone());
        assert_eq!(
            to_url_with("service=platform user=ops", env).expect("valid"),
            "postgres:///?host=/tmp/a,/tmp/b&port=6432&dbname=platform&password=s3cret&user=ops"
        );
        assert_eq!(
            with_url_service(
                "postgres://ops@/other?service=platform&sslmode=require",
                env
            )
            .expect("valid"),
            "postgres://ops@/other?host=/tmp/a,/tmp/b&port=6432&password=s3cret&sslmode=require"
        );
        // A password or a port the URL gives wins over the service's.
        assert_eq!(
            with_url_service("postgres://ops:pw@db:5433/x?service=platform", env).expect("valid"),
            "postgres://ops:pw@db:5433/x?"
        );
        assert_eq!(
            with_url_service("postgres://db/x?service=platform", env).expect("valid"),
            "postgres://db/x?port=6432&user=observer&password=s3cret"
        );
        assert!(
            to_url_with("service=nowhere", env)
                .expect_err("refused")
                .contains("no service \"nowhere\"")
        );
    }

    #[test]
    fn urls_are_not_keyword_value_strings() {
        assert!(!is_keyword_value("postgres://u@h/db?sslmode=require"));
        assert!(is_keyword_value("dbname=platform"));
        assert!(!is_keyword_value("platform"));
        assert!(is_keyword_value("host=db password=a://b"));
    }
}
