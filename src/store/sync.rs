//! Keeping a copy of the ledger current with little work per poll (SPEC §5).
//!
//! The first poll loads every row in scope. After that a poll reads, in one read-only
//! repeatable-read transaction:
//! 1. the rows changed since the last poll's database clock minus a **slack**, through the
//!    claim index (see [`super::fleet`]). Writers stamp `updated_at` with their own clock at the
//!    start of their transaction, so a change can become visible with an `updated_at` earlier
//!    than the poll that first sees it; the slack covers clock lag plus transaction duration;
//! 2. one **resync slice**: the ids and row versions (`xmin`) of a few pages, compared with
//!    the copy; rows that differ are read again by primary key. The slices walk the whole
//!    table once per cycle, so anything the first step could miss (an `updated_at` stamped
//!    further back than the slack, a hand-made update) shows within one cycle. A row the cycle
//!    never saw was deleted or moved behind the cursor: it is confirmed by primary key;
//! 3. every mutation lease in scope (a small table).
//!
//! The caller gets [`Changes`]: rows to add or replace, ids to drop, and the leases. Rows read
//! again with the version already known are not passed on.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::fleet;
use super::rows::{BoardRecord, LeaseRow};
use super::{Layout, StoreError};

/// How the copy is kept current.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SyncSettings {
    /// How far before the last poll's clock a change may be stamped and still be found by the
    /// next poll's delta.
    pub slack: Duration,
    /// About how long one resync cycle (a walk over the whole table) takes.
    pub resync_cycle: Duration,
    /// Bounds on the pages one resync slice reads.
    pub min_slice_pages: i64,
    pub max_slice_pages: i64,
}

impl Default for SyncSettings {
    fn default() -> Self {
        Self {
            slack: Duration::from_secs(5),
            resync_cycle: Duration::from_secs(120),
            min_slice_pages: 16,
            max_slice_pages: 1024,
        }
    }
}

/// Pages per statement of the first load.
const LOAD_CHUNK_PAGES: i64 = 2048;
/// Rows confirmed by primary key per poll at the end of a cycle.
const CONFIRM_BATCH: usize = 2000;

/// What changed since the previous poll.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// The database clock of this poll.
    pub db_now: DateTime<Utc>,
    /// The first load (or a reload): `upserts` is the whole ledger in scope.
    pub reset: bool,
    pub upserts: Vec<BoardRecord>,
    pub deletes: Vec<Uuid>,
    /// Every mutation lease in scope.
    pub leases: Vec<LeaseRow>,
    pub report: SyncReport,
}

/// What a poll cost and how far the resync got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub statements: u32,
    /// Rows read (including ids of a resync slice).
    pub rows_read: usize,
    /// Completed resync cycles.
    pub cycles: u32,
    /// Progress of the current cycle: pages walked of the table's pages.
    pub cycle_page: i64,
    pub table_pages: i64,
}

/// What the copy knows of one row.
#[derive(Debug, Clone, Copy)]
struct Known {
    version: i64,
    /// The last cycle in which this version of the row was read.
    seen: u32,
}

/// The sync's memory between polls.
#[derive(Debug)]
struct Mirror {
    /// The clock of the last good poll.
    last_now: DateTime<Utc>,
    known: HashMap<Uuid, Known>,
    /// The resync cycle under way; rows loaded before it count as unseen.
    cycle: u32,
    /// The next page of the resync walk.
    cursor: i64,
    /// Ids the finished cycle never saw, awaiting confirmation by primary key.
    suspects: Vec<Uuid>,
}

/// What a poll learned, applied to the [`Mirror`] only once its transaction committed (a
/// failed poll must leave the copy exactly as it was, or its changes would be lost).
#[derive(Debug, Default)]
struct Learned {
    /// Rows read (new version or not): their version, now seen in this cycle.
    read: Vec<(Uuid, i64)>,
    /// Rows a slice showed unchanged.
    unchanged: Vec<Uuid>,
    gone: Vec<Uuid>,
    /// Where the resync walk goes next; `None`: the cycle is complete.
    cursor: Option<i64>,
    /// Suspects confirmed this poll (taken from the end of the list).
    confirmed: usize,
}

/// Keeps a copy of the ledger in scope current.
#[derive(Debug)]
pub struct LedgerSync {
    tenant: Option<String>,
    settings: SyncSettings,
    mirror: Option<Mirror>,
}

impl LedgerSync {
    pub fn new(tenant: Option<String>, settings: SyncSettings) -> Self {
        Self {
            tenant,
            settings,
            mirror: None,
        }
    }

    pub fn settings(&self) -> &SyncSettings {
        &self.settings
    }

    /// Forgets everything: the next poll loads the whole ledger again.
    pub fn reset(&mut self) {
        self.mirror = None;
    }

    /// One poll. `period` is how often polls happen, which sizes the resync slices. A failed
    /// poll changes nothing, so the next one covers its changes too.
    pub async fn poll(
        &mut self,
        pool: &PgPool,
        layout: &Layout,
        period: Duration,
    ) -> Result<Changes, StoreError> {
        let mut tx = pool
            .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await?;
        let outcome = match &self.mirror {
            None => self.load(&mut tx, layout).await.map(|(c, m)| (c, Err(m))),
            Some(mirror) => self
                .refresh(&mut tx, layout, mirror, period)
                .await
                .map(|(c, l)| (c, Ok(l))),
        };
        // Whatever happened, the read-only transaction ends here.
        let committed = tx.commit().await;
        let (mut changes, learned) = outcome?;
        committed?;
        match learned {
            Err(loaded) => self.mirror = Some(loaded),
            Ok(learned) => {
                if let Some(mirror) = &mut self.mirror {
                    mirror.learn(learned, changes.db_now);
                    changes.report.cycles = mirror.cycle.saturating_sub(1);
                    changes.report.cycle_page = mirror.cursor;
                }
            }
        }
        Ok(changes)
    }

    async fn load(
        &self,
        conn: &mut PgConnection,
        layout: &Layout,
    ) -> Result<(Changes, Mirror), StoreError> {
        let tenant = self.tenant.as_deref();
        let mut report = SyncReport::default();
        let (db_now, pages) = fleet::clock(conn).await?;
        report.statements += 1;
        let upserts = match tenant {
            Some(tenant) => {
                report.statements += 1;
                fleet::tenant(conn, tenant).await?
            }
            None => {
                let mut rows = Vec::new();
                let mut from = 0;
                loop {
                    let to = (from + LOAD_CHUNK_PAGES < pages).then_some(from + LOAD_CHUNK_PAGES);
                    rows.extend(fleet::pages(conn, None, from, to).await?);
                    report.statements += 1;
                    match to {
                        Some(to) => from = to,
                        None => break,
                    }
                }
                rows
            }
        };
        let leases = fleet::leases(conn, layout, tenant).await?;
        report.statements += 1;
        report.rows_read = upserts.len() + leases.len();
        report.table_pages = pages;
        let mirror = Mirror {
            last_now: db_now,
            known: upserts
                .iter()
                .map(|r| {
                    (
                        r.id,
                        Known {
                            version: r.version,
                            seen: 0,
                        },
                    )
                })
                .collect(),
            // Rows loaded now count as unseen by the first cycle, so a row deleted before the
            // walk reaches it is still noticed at the end of that cycle.
            cycle: 1,
            cursor: 0,
            suspects: Vec::new(),
        };
        Ok((
            Changes {
                db_now,
                reset: true,
                upserts,
                deletes: Vec::new(),
                leases,
                report,
            },
            mirror,
        ))
    }

    async fn refresh(
        &self,
        conn: &mut PgConnection,
        layout: &Layout,
        mirror: &Mirror,
        period: Duration,
    ) -> Result<(Changes, Learned), StoreError> {
        let tenant = self.tenant.as_deref();
        let mut report = SyncReport::default();
        let mut learned = Learned {
            cursor: Some(mirror.cursor),
            ..Learned::default()
        };
        let (db_now, pages) = fleet::clock(conn).await?;
        report.statements += 1;
        let mut changes = Changes {
            db_now,
            ..Changes::default()
        };

        // 1. What changed since the last poll (minus the slack).
        let slack = chrono::Duration::from_std(self.settings.slack).unwrap_or_default();
        let changed = fleet::changed_since(conn, tenant, mirror.last_now - slack).await?;
        report.statements += 1;
        report.rows_read += changed.len();
        mirror.sort_out(changed, &mut changes.upserts, &mut learned);

        // 2. One resync slice, or the confirmation of rows the last cycle never saw.
        if mirror.suspects.is_empty() {
            let from = mirror.cursor;
            let slice = self.slice_pages(pages, period);
            let to = (from + slice < pages).then_some(from + slice);
            let versions = fleet::versions(conn, tenant, from, to).await?;
            report.statements += 1;
            report.rows_read += versions.len();
            let mut differ = Vec::new();
            for (id, version) in versions {
                match mirror.known.get(&id) {
                    Some(known) if known.version == version => learned.unchanged.push(id),
                    _ => differ.push(id),
                }
            }
            if !differ.is_empty() {
                let rows = fleet::by_ids(conn, tenant, &differ).await?;
                report.statements += 1;
                report.rows_read += rows.len();
                mirror.sort_out(rows, &mut changes.upserts, &mut learned);
            }
            learned.cursor = to;
        } else {
            let keep = mirror.suspects.len().saturating_sub(CONFIRM_BATCH);
            let batch = &mirror.suspects[keep..];
            let found = fleet::by_ids(conn, tenant, batch).await?;
            report.statements += 1;
            report.rows_read += found.len();
            let present: HashSet<Uuid> = found.iter().map(|r| r.id).collect();
            learned.gone = batch
                .iter()
                .filter(|id| !present.contains(id))
                .copied()
                .collect();
            changes.deletes = learned.gone.clone();
            learned.confirmed = batch.len();
            mirror.sort_out(found, &mut changes.upserts, &mut learned);
        }

        // 3. The leases.
        changes.leases = fleet::leases(conn, layout, tenant).await?;
        report.statements += 1;
        report.rows_read += changes.leases.len();
        report.table_pages = pages;
        changes.report = report;
        Ok((changes, learned))
    }

    /// Pages per slice so that a cycle takes about `resync_cycle` at this poll period.
    fn slice_pages(&self, table_pages: i64, period: Duration) -> i64 {
        let polls =
            (self.settings.resync_cycle.as_secs_f64() / period.as_secs_f64().max(0.001)).max(1.0);
        let wanted = (table_pages as f64 / polls).ceil() as i64;
        wanted.clamp(
            self.settings.min_slice_pages.max(1),
            self.settings
                .max_slice_pages
                .max(self.settings.min_slice_pages)
                .max(1),
        )
    }
}

impl Mirror {
    /// Passes on the rows whose version is new; every row read counts as seen.
    fn sort_out(&self, rows: Vec<BoardRecord>, out: &mut Vec<BoardRecord>, learned: &mut Learned) {
        for row in rows {
            learned.read.push((row.id, row.version));
            match self.known.get(&row.id) {
                Some(known) if known.version == row.version => {}
                _ => out.push(row),
            }
        }
    }

    /// Applies what a committed poll learned.
    fn learn(&mut self, learned: Learned, db_now: DateTime<Utc>) {
        let cycle = self.cycle;
        for (id, version) in learned.read {
            self.known.insert(
                id,
                Known {
                    version,
                    seen: cycle,
                },
            );
        }
        for id in learned.unchanged {
            if let Some(known) = self.known.get_mut(&id) {
                known.seen = cycle;
            }
        }
        for id in &learned.gone {
            self.known.remove(id);
        }
        let keep = self.suspects.len().saturating_sub(learned.confirmed);
        self.suspects.truncate(keep);
        match learned.cursor {
            Some(cursor) => self.cursor = cursor,
            None => self.finish_cycle(),
        }
        self.last_now = db_now;
    }

    /// The walk reached the end of the table: whatever it never saw is a suspect.
    fn finish_cycle(&mut self) {
        let cycle = self.cycle;
        self.suspects = self
            .known
            .iter()
            .filter(|(_, known)| known.seen != cycle)
            .map(|(id, _)| *id)
            .collect();
        self.cycle = cycle.wrapping_add(1);
        self.cursor = 0;
    }
}
