//! Who is acting: recorded in every audit record (domain contract §3, see [`crate::domain`]).

/// The operator behind an action, as far as this machine can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The OS user running the console.
    pub user: String,
    pub host: String,
    /// `client-ip client-port` from `SSH_CONNECTION`, when the console runs over ssh.
    pub ssh_client: Option<String>,
}

impl Actor {
    /// The current OS user, host name and ssh client.
    pub(crate) fn from_environment() -> Self {
        let user = std::env::var("USER")
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(|| {
                nix::unistd::User::from_uid(nix::unistd::getuid())
                    .ok()
                    .flatten()
                    .map(|u| u.name)
            })
            .unwrap_or_else(|| format!("uid-{}", nix::unistd::getuid()));
        let host = nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .unwrap_or_else(|| "unknown-host".into());
        let ssh_client = std::env::var("SSH_CONNECTION")
            .ok()
            .and_then(|c| ssh_client_of(&c));
        Self {
            user,
            host,
            ssh_client,
        }
    }
}

/// `SSH_CONNECTION` is `client-ip client-port server-ip server-port`; keep the client half.
fn ssh_client_of(connection: &str) -> Option<String> {
    let mut parts = connection.split_whitespace();
    let ip = parts.next()?;
    let port = parts.next()?;
    Some(format!("{ip} {port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ssh_client_is_the_first_half_of_ssh_connection() {
        assert_eq!(
            ssh_client_of("10.1.2.3 52814 10.9.9.9 22").as_deref(),
            Some("10.1.2.3 52814")
        );
        assert_eq!(ssh_client_of(""), None);
    }
}
