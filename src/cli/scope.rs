//! A `--tenant` that matches nothing stops a command with its own exit code and a sentence
//! telling a typo from a tenant with nothing to migrate.

use super::Failure;
use crate::domain::session::Session;

pub(super) async fn require_known_tenant(session: &Session) -> Result<(), Failure> {
    let (Some(tenant), Some(found)) =
        (session.tenant_scope(), session.reads().scope_match().await?)
    else {
        return Ok(());
    };
    match found.sentence(tenant) {
        Some(sentence) => Err(Failure::NothingInScope(sentence)),
        None => Ok(()),
    }
}
