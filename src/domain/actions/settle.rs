//! What settles a request whose outcome is unknown: the same request again, as a dry run, on
//! exactly its subjects — one command, for the command line's last line, the live console's
//! dialog and what it prints when it quits.

use super::{Action, Kind, RequestId};

/// `bootstrap-console <command> <ids> --request-id R --reason '…' --dry-run` for `actions`
/// (of one kind: one request), under `tenant` when the request had a scope.
pub fn settle_command(
    actions: &[Action],
    request: RequestId,
    reason: &str,
    tenant: Option<&str>,
) -> String {
    let command = match actions.first().map(Action::kind) {
        Some(Kind::Cancel) => "cancel",
        Some(Kind::RemoveLease) => "lease remove",
        _ => "retry",
    };
    let mut words: Vec<String> = actions.iter().map(|a| a.subject_id().to_string()).collect();
    if let Some(tenant) = tenant {
        words.push(format!(
            "--tenant {}",
            shell_word(tenant, "the same tenant")
        ));
    }
    if actions.iter().any(Action::is_forced) {
        words.push("--force".into());
    }
    format!(
        "bootstrap-console {command} {} --request-id {request} --reason {} --dry-run",
        words.join(" "),
        shell_word(reason, "the same reason")
    )
}

/// `text` as one word a POSIX shell reads back unchanged; text a shell line cannot carry
/// (control characters, or too long to read) becomes `placeholder`, to fill in.
pub(crate) fn shell_word(text: &str, placeholder: &str) -> String {
    if text.chars().any(char::is_control) || text.chars().count() > 200 {
        return format!("'<{placeholder}>'");
    }
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}
