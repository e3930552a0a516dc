//! Connection URLs that list several hosts, as libpq accepts them: sqlx connects to one host
//! only, so the console splits such a URL into one URL per host and picks the primary itself.
//!
//! Two spellings are understood: hosts in the authority (`postgres://u@a:5432,b:5433/db`) and
//! `host`/`port` query parameters with comma-separated values (`postgres:///db?host=a,b`),
//! which is how Unix socket directories are usually listed.

/// One URL per host of `url`, in the order given (the URL itself when it names one host).
pub(crate) fn single_host_urls(url: &str) -> Result<Vec<String>, String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Ok(vec![url.to_string()]);
    };
    let (before_query, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = match before_query.find('/') {
        Some(at) => before_query.split_at(at),
        None => (before_query, ""),
    };
    let (userinfo, hostlist) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (Some(user), hosts),
        None => (None, authority),
    };
    if let Some(userinfo) = userinfo
        && hostlist.is_empty()
    {
        // `postgres://ops@/platform?host=/tmp/a,/tmp/b`: libpq takes user info without a host
        // (the hosts come from the query, or the default), the URL parser sqlx uses does not.
        // The same user in the query means the same.
        // Re-encoded for a query, where `+` and `&` mean something else.
        let encoded = |part: &str| super::conninfo::encode(&super::conninfo::decode(part));
        let (user, password) = match userinfo.split_once(':') {
            Some((user, password)) => (encoded(user), Some(encoded(password))),
            None => (encoded(userinfo), None),
        };
        let moved = std::iter::once(format!("user={user}"))
            .chain(password.map(|p| format!("password={p}")))
            .chain(query.filter(|q| !q.is_empty()).map(str::to_string))
            .collect::<Vec<_>>()
            .join("&");
        return single_host_urls(&format!("{scheme}://{path}?{moved}"));
    }
    let user = userinfo.map_or(String::new(), |u| format!("{u}@"));
    if hostlist.contains(',') {
        let hosts: Vec<&str> = hostlist.split(',').collect();
        if hosts.iter().any(|h| h.is_empty()) {
            return Err("an empty host in the host list".into());
        }
        let query = query.map_or(String::new(), |q| format!("?{q}"));
        return Ok(hosts
            .iter()
            .map(|host| format!("{scheme}://{user}{host}{path}{query}"))
            .collect());
    }
    let Some(query) = query else {
        return Ok(vec![url.to_string()]);
    };
    let params: Vec<(&str, &str)> = query
        .split('&')
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect();
    // The last of a repeated parameter counts, as in libpq.
    let listed = |name: &str| {
        params
            .iter()
            .rfind(|(key, _)| *key == name)
            .map(|(_, value)| value.split(',').collect::<Vec<_>>())
    };
    let hosts = listed("host").unwrap_or_else(|| vec![""]);
    let ports = listed("port").unwrap_or_default();
    if ports.len() > 1 && ports.len() != hosts.len() {
        return Err(format!(
            "{} host{} but {} ports: give one port, or one per host",
            hosts.len(),
            if hosts.len() == 1 { "" } else { "s" },
            ports.len()
        ));
    }
    if hosts.len() < 2 {
        return Ok(vec![url.to_string()]);
    }
    Ok(hosts
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let kept = params
                .iter()
                .filter(|(key, _)| *key != "host" && *key != "port")
                .map(|(key, value)| format!("{key}={value}"));
            let mut own = vec![format!("host={host}")];
            match ports.len() {
                0 => {}
                1 => own.push(format!("port={}", ports[0])),
                _ => own.push(format!("port={}", ports[i])),
            }
            let query: Vec<String> = own.into_iter().chain(kept).collect();
            format!(
                "{scheme}://{user}{authority_hosts}{path}?{}",
                query.join("&"),
                authority_hosts = hostlist
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::single_host_urls;

    #[test]
    fn hosts_in_the_authority_become_one_url_each() {
        assert_eq!(
            single_host_urls("postgres://ops:pw@db-a:5432,db-b:5433/platform?sslmode=verify-full")
                .expect("valid"),
            [
                "postgres://ops:pw@db-a:5432/platform?sslmode=verify-full",
                "postgres://ops:pw@db-b:5433/platform?sslmode=verify-full"
            ]
        );
        assert_eq!(
            single_host_urls("postgres://u@%2Ftmp%2Fa,%2Ftmp%2Fb/sandbox").expect("valid"),
            [
                "postgres://u@%2Ftmp%2Fa/sandbox",
                "postgres://u@%2Ftmp%2Fb/sandbox"
            ]
        );
    }

    #[test]
    fn host_and_port_parameters_are_split_pairwise() {
        assert_eq!(
            single_host_urls("postgres:///platform?host=/tmp/a,/tmp/b&port=5432,5433&user=ops")
                .expect("valid"),
            [
                "postgres:///platform?host=/tmp/a&port=5432&user=ops",
                "postgres:///platform?host=/tmp/b&port=5433&user=ops"
            ]
        );
        assert!(single_host_urls("postgres:///p?host=a,b,c&port=1,2").is_err());
    }

    #[test]
    fn user_info_without_a_host_moves_to_the_query() {
        assert_eq!(
            single_host_urls("postgres://ops:pw@/platform?host=/tmp/a,/tmp/b").expect("valid"),
            [
                "postgres:///platform?host=/tmp/a&user=ops&password=pw",
                "postgres:///platform?host=/tmp/b&user=ops&password=pw"
            ]
        );
        assert_eq!(
            single_host_urls("postgres://ops@/platform").expect("valid"),
            ["postgres:///platform?user=ops"]
        );
        // `+` and `&` in user info are characters, not a space and a new parameter.
        assert_eq!(
            single_host_urls("postgres://o%2Bps:p+w&x=1@/platform?host=/tmp/a").expect("valid"),
            ["postgres:///platform?user=o%2Bps&password=p%2Bw%26x%3D1&host=/tmp/a"]
        );
    }

    #[test]
    fn ports_must_match_the_hosts_and_the_last_host_counts() {
        assert!(single_host_urls("postgres:///p?host=db&port=5432,5433").is_err());
        assert_eq!(
            single_host_urls("postgres:///p?host=x&host=/tmp/a,/tmp/b").expect("valid"),
            ["postgres:///p?host=/tmp/a", "postgres:///p?host=/tmp/b"]
        );
    }

    #[test]
    fn a_single_host_is_left_as_it_is() {
        for url in [
            "postgres://ops@db:5432/platform",
            "postgres:///platform?host=/tmp/a",
            "postgres://db/platform?application_name=x",
        ] {
            assert_eq!(single_host_urls(url).expect("valid"), [url]);
        }
        assert!(single_host_urls("postgres://a,,b/p").is_err());
    }
}
