//! Whether the console may act, as a pure function of what is known of its servers: the grants
//! found at connect, `--read-only`, whether the primary is in recovery, and the split-brain
//! guard. The topology task decides when to ask again; these rules decide what an answer means.

use super::Reader;
use crate::store::connect::Target;
use crate::store::{Capabilities, Db};

/// Whether this session may act, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    ReadOnly {
        reason: String,
    },
    /// The split-brain guard doubts the primary (see [`super::lineage`]): shown as read-only,
    /// while each action still asks the guard afresh, which refuses it as such (or lets it
    /// through once the doubt is gone, or `--primary` forces it).
    InDoubt {
        reason: String,
    },
}

impl Access {
    pub fn read_only_reason(&self) -> Option<&str> {
        match self {
            Self::ReadWrite => None,
            Self::ReadOnly { reason } | Self::InDoubt { reason } => Some(reason),
        }
    }

    pub(crate) fn is_read_only(&self) -> bool {
        !matches!(self, Self::ReadWrite)
    }

    /// Read-only whatever the split-brain guard says: `--read-only`, the grants, a standby.
    pub(crate) fn refuses_actions(&self) -> bool {
        matches!(self, Self::ReadOnly { .. })
    }
}

/// Why actions cannot be taken before `migrate`, when that is so.
fn unmigrated(capabilities: &Capabilities) -> Option<String> {
    crate::domain::actions::audit_ready(capabilities)
        .err()
        .map(|refusal| refusal.to_string())
}

/// Whether `access` is read-only for want of `migrate` alone (not `--read-only`, a standby or
/// a grant, which `migrate` would not change).
pub(crate) fn needs_migrate(access: &Access, capabilities: &Capabilities) -> bool {
    matches!(access, Access::ReadOnly { reason } if Some(reason) == unmigrated(capabilities).as_ref())
}

/// Why a console on a standby may not act.
pub(super) fn standby() -> Access {
    Access::ReadOnly {
        reason: crate::store::capabilities::STANDBY.into(),
    }
}

/// What a role with `capabilities` may do: nothing on a standby, without the grants, or
/// before `migrate` has installed what actions write through (said at once, in the header,
/// not first by a dialog).
pub(super) fn granted(capabilities: &Capabilities) -> Access {
    match capabilities
        .write_blocker()
        .or_else(|| unmigrated(capabilities))
    {
        Some(reason) => Access::ReadOnly { reason },
        None => Access::ReadWrite,
    }
}

/// The access a session starts with: `--read-only`, else what the role may do on the server
/// found — with, on a standby used for want of a primary, what the other hosts said.
pub(super) fn at_start(
    read_only: bool,
    capabilities: &Capabilities,
    passed_over: Option<&str>,
) -> Access {
    if read_only {
        return Access::ReadOnly {
            reason: "started with --read-only".into(),
        };
    }
    match (granted(capabilities), passed_over) {
        (Access::ReadOnly { reason }, Some(why)) if capabilities.in_recovery => Access::ReadOnly {
            reason: format!("{reason}; no listed host answered as a primary: {why}"),
        },
        (access, _) => access,
    }
}

/// Whether acting depends only on the server being a primary (not `--read-only`, and the role
/// has the grants): a promotion allows actions, a demotion stops them. A standby's catalog,
/// grants included, is the one its primary had.
pub(super) fn follows_recovery(read_only: bool, capabilities: &Capabilities) -> bool {
    let promoted = Capabilities {
        in_recovery: false,
        ..capabilities.clone()
    };
    !read_only && granted(&promoted) == Access::ReadWrite
}

/// Why acting now could write to a dead timeline: the standby polls read was promoted, but
/// actions still go to another server — an old primary that may be back without fencing,
/// whose writes the new primary will never see.
pub(super) fn split_brain_risk(primary: &Db, reader: Option<&Reader>) -> Option<String> {
    let reader = reader.filter(|r| r.promoted)?;
    let (acting, promoted) = (primary.host(), reader.db.host());
    // The point first: at 80 columns the rest is cut (the log has the hosts).
    (!primary.same_host(&reader.db)).then(|| {
        format!(
            "old primary? the polled standby was promoted; nothing is applied to \
             {acting} (list {promoted} in --database-url, or restart against it)"
        )
    })
}

/// `stored`, unless acting now risks a split brain: the polled standby was promoted while
/// actions go elsewhere, or the split-brain guard's last look found a doubt (`doubt`).
pub(super) fn effective(
    stored: &Access,
    primary: &Db,
    reader: Option<&Reader>,
    doubt: Option<&str>,
) -> Access {
    match (split_brain_risk(primary, reader), doubt) {
        _ if stored.is_read_only() => stored.clone(),
        (Some(reason), _) => Access::ReadOnly { reason },
        (None, Some(doubt)) => Access::InDoubt {
            reason: doubt.to_string(),
        },
        (None, None) => stored.clone(),
    }
}

/// Why this console may not act, or which actions it may not take and why, in one sentence
/// (said at connect, not first when a key is refused).
pub(super) fn write_limits(access: &Access, capabilities: &Capabilities) -> Option<String> {
    if let Some(reason) = access.read_only_reason() {
        return Some(format!("read-only: {reason}"));
    }
    // Actions lacking the same grants are named together.
    let mut groups: Vec<(Vec<&'static str>, String)> = Vec::new();
    for (writes, reason) in capabilities.blocked_writes() {
        match groups.iter_mut().find(|(_, r)| *r == reason) {
            Some((actions, _)) => actions.push(writes.actions()),
            None => groups.push((vec![writes.actions()], reason)),
        }
    }
    let said: Vec<String> = groups
        .into_iter()
        .map(|(actions, reason)| {
            format!(
                "{} not possible: {}",
                actions.join(" and "),
                crate::text::clean(&reason, 300)
            )
        })
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// Why a database cannot be watched: no ledger, or a role that may not read it.
pub(super) fn ledger_refusal(
    target: &Target,
    capabilities: &Capabilities,
) -> Option<super::OpenError> {
    let tables = capabilities.missing_ledger_tables();
    if !tables.is_empty() {
        return Some(super::OpenError::MissingLedger {
            target: target.to_string(),
            missing: tables,
        });
    }
    let grants = capabilities.missing_read_grants();
    (!grants.is_empty()).then(|| super::OpenError::MissingPrivilege {
        role: crate::text::clean(&capabilities.current_user, 64),
        missing: grants,
    })
}
