//! One bootstrap in depth: what the detail view and `status` of one space show.

use chrono::{DateTime, Utc};

use super::model::{AuditRecord, Bootstrap, Item, MutationLease, RowError};
use crate::store::StoreError;
use crate::store::conflict::MaybeConflict;
use crate::store::read;

/// A detail view could not be built.
#[derive(Debug, thiserror::Error)]
pub enum DetailError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Row(#[from] RowError),
}

/// One bootstrap in depth (the detail view and `status` of one space).
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    pub db_now: DateTime<Utc>,
    pub bootstrap: Bootstrap,
    pub lease: Option<MutationLease>,
    /// (status, count), in lifecycle order, only statuses that have items.
    pub item_counts: Vec<(super::model::ItemStatus, i64)>,
    pub failed_items: Vec<Item>,
    pub running_item: Option<Item>,
    /// The space's recent operator actions, or why they cannot be shown (no audit table, or
    /// a role that may not read it).
    pub audit: Result<Vec<AuditRecord>, String>,
}

impl Detail {
    pub fn count(&self, status: super::model::ItemStatus) -> i64 {
        self.item_counts
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(0, |(_, n)| *n)
    }
}

impl TryFrom<read::DetailRows> for Detail {
    type Error = DetailError;

    fn try_from(rows: read::DetailRows) -> Result<Self, DetailError> {
        let bootstrap = Bootstrap::try_from(rows.bootstrap)?;
        let mut item_counts = Vec::new();
        for (status, n) in rows.item_counts {
            let parsed = super::model::ItemStatus::parse(&status).ok_or_else(|| RowError {
                table: "item",
                id: format!("{} (one of {n})", bootstrap.id),
                problem: format!("unknown status {:?}", super::text::clip(&status, 40)),
            })?;
            item_counts.push((parsed, n));
        }
        item_counts.sort();
        Ok(Self {
            db_now: rows.db_now,
            lease: rows.lease.map(MutationLease::from),
            item_counts,
            failed_items: rows
                .failed_items
                .into_iter()
                .map(Item::try_from)
                .collect::<Result<_, _>>()?,
            running_item: rows.running_item.map(Item::try_from).transpose()?,
            audit: Ok(rows.audit.unwrap_or_default()),
            bootstrap,
        })
    }
}

impl MaybeConflict for DetailError {
    fn is_recovery_conflict(&self) -> bool {
        matches!(self, Self::Store(e) if e.is_recovery_conflict())
    }

    fn is_session_ended(&self) -> bool {
        matches!(self, Self::Store(e) if e.is_session_ended())
    }
}
