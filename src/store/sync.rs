//! Keeping a copy of the ledger current with little work per poll (domain contract §5, see
//! [`crate::domain`]).
//!
//! The first poll loads every row in scope. After that a poll reads, in one read-only
//! repeatable-read transaction:
//! 1. the rows changed since the last poll's database clock minus a **slack**, through the
//!    claim index (see [`super::fleet`]). Writers stamp `updated_at` with their own clock at the
//!    start of their transaction, so a change can become visible with an `updated_at` earlier
//!    than the poll that first sees it; the slack covers clock lag plus transaction duration;
//! 2. one **resync slice**: the ids, row versions (`xmin`) and pages of a few table pages. A
//!    row whose version differs from the copy, or that the copy last saw on one of these pages
//!    and that is no longer there, is read again by primary key — not found means deleted. The
//!    slices walk the whole table once per cycle, so anything the first step misses (an
//!    `updated_at` stamped further back than the slack, a hand-made update, a deletion) shows
//!    within one cycle: every row's old and new page are both passed within a cycle;
//! 3. every mutation lease in scope (a small table).
//!
//! The caller gets [`Changes`]: rows to add or replace, ids to drop, and the leases. Rows read
//! again with the version already known are not passed on.
//!
//! # The guarantee
//!
//! A change shows at the next poll when the writer's clock lag plus its transaction's duration
//! is at most the slack (`--delta-slack-secs`, 5 s by default), and always within one resync
//! cycle (about two minutes, [`SyncSettings::resync_cycle`]). Each slice reads
//! `pages × poll period / cycle` pages, at least 16 and at most 1,024, so beyond about 1.3
//! million rows at one poll a second the cycle grows. Under `--tenant` the slices still walk
//! the whole table (keeping the tenant's rows), so a scoped console costs the database about
//! what an unscoped one does. On a standby the watermark is the instant its data is known
//! complete to (see [`super::replica`]), and stays put when the standby cannot tell, so lag
//! beyond the slack loses no change.
//!
//! A poll is the database clock, the changed rows, one slice (plus one read by primary key
//! when the slice found rows to read again) and the leases: four or five short statements.
//! The console creates nothing on platform tables. Tests hold this to account against a real
//! PostgreSQL: a randomized run writes progress, claims, failures, deletions, new rows, leases,
//! clocks lagging within the slack, a transaction held open across a poll and stale stamps,
//! changes the board's sort and filters, moves the clock, and checks after every poll that the
//! model equals a full fetch judged at the same instant; another `EXPLAIN`s every poll
//! statement on 20,000 rows and fails on a sequential scan of the bootstrap table.
//!
//! When the platform has an index led by `updated_at` on the bootstrap table (found at connect,
//! [`super::capabilities`]), the changed rows are read through it instead of walking the live
//! worker leases of the claim index.
//!
//! Measured (`cargo bench --bench fleet`, 2 cores, PostgreSQL 15, 100,000 spaces over 1,000
//! tenants, 4.5 million items, 8 simulated workers writing): a poll costs the database 2.9 ms
//! (`pg_stat_statements`, planning plus execution), against 151 ms for the first release's full
//! board query and 142 ms for a plain `SELECT *` through the same driver; five consoles watching
//! at once kept the database 1.4% of one core busy, against 276% for five first-release
//! consoles. With 20,000 running jobs the `updated_at` index cut the changed-rows statement
//! from 0.65 ms to 0.28 ms.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use super::db::{Db, TxKind};
use super::fleet;
use super::replica::{Lsn, Primary, Replication};
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

/// What changed since the previous poll.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// The instant the rows read are as of: the database clock, or on a standby that has not
    /// replayed everything the primary had written, the last replayed commit's time.
    pub db_now: DateTime<Utc>,
    /// How far the standby polled had replayed (`None` on a primary).
    pub replication: Option<Replication>,
    /// The first load: `upserts` is the whole ledger in scope.
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
    /// Rows read (including the ids of a resync slice).
    pub rows_read: usize,
    /// Completed resync cycles.
    pub cycles: u32,
    /// The next page of the current cycle, and the table's size in pages.
    pub cycle_page: i64,
    pub table_pages: i64,
}

/// What the copy knows of one row.
#[derive(Debug, Clone, Copy)]
struct Known {
    version: i64,
    /// The page its version was on when last read.
    page: i64,
}

/// The sync's memory between polls.
#[derive(Debug)]
struct Mirror {
    /// The clock of the last good poll.
    last_now: DateTime<Utc>,
    known: HashMap<Uuid, Known>,
    /// The same rows by page, for the rows a slice expects to find.
    by_page: BTreeSet<(i64, Uuid)>,
    cycles: u32,
    /// The next page of the resync walk.
    cursor: i64,
}

/// What a poll learned, applied to the [`Mirror`] only once its transaction committed (a
/// failed poll must leave the copy exactly as it was, or its changes would be lost).
#[derive(Debug, Default)]
struct Learned {
    /// Rows read: id, version, page.
    read: Vec<fleet::Version>,
    gone: Vec<Uuid>,
    /// Where the resync walk goes next; `None`: the cycle is complete.
    cursor: Option<i64>,
}

/// Keeps a copy of the ledger in scope current.
#[derive(Debug)]
pub struct LedgerSync {
    tenant: Option<String>,
    settings: SyncSettings,
    mirror: Option<Mirror>,
    /// Readings of the primary's WAL position and clock, oldest first, while polls read a
    /// standby: once the standby has replayed one, its data is known complete up to then.
    primary_readings: VecDeque<(Lsn, DateTime<Utc>)>,
    /// How far the last poll's data was behind the clock of the server it read.
    behind: chrono::Duration,
}

impl LedgerSync {
    pub fn new(tenant: Option<String>, settings: SyncSettings) -> Self {
        Self {
            tenant,
            settings,
            mirror: None,
            primary_readings: VecDeque::new(),
            behind: chrono::Duration::zero(),
        }
    }

    /// What the poll about to run knows of the primary, given what it answered just now
    /// (`None`: it did not answer). A reading is kept a while (see `primary_readings`).
    pub(crate) fn primary_read(&mut self, reading: Option<(Lsn, DateTime<Utc>)>) -> Primary {
        const KEPT: usize = 120;
        let Some((position, at)) = reading else {
            return Primary::Silent;
        };
        self.primary_readings.push_back((position, at));
        while self.primary_readings.len() > KEPT {
            self.primary_readings.pop_front();
        }
        Primary::At {
            position,
            samples: self.primary_readings.iter().copied().collect(),
        }
    }

    /// How far behind its server's clock the last poll's data was (a standby's lag): what
    /// views read beside the polls subtract from that clock, to judge as of the same data.
    pub fn behind(&self) -> chrono::Duration {
        self.behind
    }

    /// One poll. `period` is how often polls happen, which sizes the resync slices. A failed
    /// poll changes nothing, so the next one covers its changes too. On a standby, `primary`
    /// is where the primary's WAL ended just before the poll: when the standby has replayed
    /// that far, its data is as of its own clock; otherwise as of its last replayed commit —
    /// the clock signals are judged by and the next delta's watermark starts from.
    pub(crate) async fn poll(
        &mut self,
        db: &Db,
        period: Duration,
        primary: &Primary,
    ) -> Result<Changes, StoreError> {
        let layout = db.layout();
        let mut tx = db.begin(TxKind::Snapshot).await?;
        let outcome = match &self.mirror {
            None => self
                .load(&mut tx, layout, primary)
                .await
                .map(|(c, m)| (c, Err(m))),
            Some(mirror) => self
                .refresh(&mut tx, layout, mirror, period, primary)
                .await
                .map(|(c, l)| (c, Ok(l))),
        };
        // Whatever happened, the read-only transaction ends here.
        let committed = tx.commit().await;
        let (mut changes, learned) = outcome?;
        committed?;
        self.behind = changes
            .replication
            .and_then(|r| r.delay())
            .unwrap_or_else(chrono::Duration::zero);
        match (learned, &mut self.mirror) {
            (Err(loaded), mirror) => *mirror = Some(loaded),
            (Ok(learned), Some(mirror)) => mirror.learn(learned, changes.db_now),
            // A refresh only happens with a mirror.
            (Ok(_), None) => {}
        }
        if let Some(mirror) = &self.mirror {
            changes.report.cycles = mirror.cycles;
            changes.report.cycle_page = mirror.cursor;
        }
        Ok(changes)
    }

    /// The poll's clock (see [`Self::poll`]), the table's pages and the replication state.
    async fn clock(
        &self,
        conn: &mut PgConnection,
        primary: &Primary,
    ) -> Result<(DateTime<Utc>, i64, Option<Replication>), StoreError> {
        let clock = fleet::clock(conn).await?;
        let replication = clock.replication(primary);
        let as_of = match replication.as_ref().map(Replication::as_of) {
            None => clock.now,
            Some(Some(as_of)) => as_of,
            // A standby that cannot tell how old its data is: the watermark and the clock stay
            // where the last poll left them, so that nothing is skipped or judged early.
            Some(None) => self.mirror.as_ref().map_or(clock.now, |m| m.last_now),
        };
        Ok((as_of, clock.pages, replication))
    }

    async fn load(
        &self,
        conn: &mut PgConnection,
        layout: &Layout,
        primary: &Primary,
    ) -> Result<(Changes, Mirror), StoreError> {
        let tenant = self.tenant.as_deref();
        let mut report = SyncReport::default();
        let (db_now, pages, replication) = self.clock(conn, primary).await?;
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
        let mut mirror = Mirror {
            last_now: db_now,
            known: HashMap::with_capacity(upserts.len()),
            by_page: BTreeSet::new(),
            cycles: 0,
            cursor: 0,
        };
        for row in &upserts {
            mirror.remember(row.id, row.version, row.page);
        }
        Ok((
            Changes {
                db_now,
                replication,
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
        primary: &Primary,
    ) -> Result<(Changes, Learned), StoreError> {
        let tenant = self.tenant.as_deref();
        let mut report = SyncReport::default();
        let mut learned = Learned::default();
        let (db_now, pages, replication) = self.clock(conn, primary).await?;
        report.statements += 1;
        let mut changes = Changes {
            db_now,
            replication,
            ..Changes::default()
        };

        // 1. What changed since the last poll (minus the slack).
        let slack = chrono::Duration::from_std(self.settings.slack).unwrap_or_default();
        let changed = fleet::changed_since(conn, layout, tenant, mirror.last_now - slack).await?;
        report.statements += 1;
        report.rows_read += changed.len();
        mirror.sort_out(changed, &mut changes.upserts, &mut learned);

        // 2. One resync slice: rows whose version differs, and rows missing from their page.
        let from = mirror.cursor;
        let end = from + self.slice_pages(pages, period);
        let to = (end < pages).then_some(end);
        let versions = fleet::versions(conn, tenant, from, to).await?;
        report.statements += 1;
        report.rows_read += versions.len();
        // What this poll's delta already read counts as known: it is not read again.
        let fresh: HashMap<Uuid, i64> = learned.read.iter().map(|(id, v, _)| (*id, *v)).collect();
        let present: HashSet<Uuid> = versions.iter().map(|(id, _, _)| *id).collect();
        let mut recheck: Vec<Uuid> = mirror
            .on_pages(from, to)
            .filter(|id| !present.contains(id) && !fresh.contains_key(id))
            .collect();
        let missing: HashSet<Uuid> = recheck.iter().copied().collect();
        for (id, version, page) in versions {
            let known = fresh
                .get(&id)
                .copied()
                .or_else(|| mirror.known.get(&id).map(|k| k.version));
            if known == Some(version) {
                learned.read.push((id, version, page));
            } else {
                recheck.push(id);
            }
        }
        if !recheck.is_empty() {
            let rows = fleet::by_ids(conn, tenant, &recheck).await?;
            report.statements += 1;
            report.rows_read += rows.len();
            let found: HashSet<Uuid> = rows.iter().map(|r| r.id).collect();
            learned.gone = missing
                .into_iter()
                .filter(|id| !found.contains(id))
                .collect();
            changes.deletes = learned.gone.clone();
            mirror.sort_out(rows, &mut changes.upserts, &mut learned);
        }
        learned.cursor = to;

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
        let least = self.settings.min_slice_pages.max(1);
        wanted.clamp(least, self.settings.max_slice_pages.max(least))
    }
}

impl Mirror {
    /// Passes on the rows whose version is new; every row read is remembered.
    fn sort_out(&self, rows: Vec<BoardRecord>, out: &mut Vec<BoardRecord>, learned: &mut Learned) {
        for row in rows {
            learned.read.push((row.id, row.version, row.page));
            match self.known.get(&row.id) {
                Some(known) if known.version == row.version => {}
                _ => out.push(row),
            }
        }
    }

    /// The ids the copy last saw on pages `[from, to)` (`to = None`: to the end).
    fn on_pages(&self, from: i64, to: Option<i64>) -> impl Iterator<Item = Uuid> + '_ {
        let end = to.unwrap_or(i64::MAX);
        self.by_page
            .range((from, Uuid::nil())..(end, Uuid::nil()))
            .map(|(_, id)| *id)
    }

    fn remember(&mut self, id: Uuid, version: i64, page: i64) {
        if let Some(old) = self.known.insert(id, Known { version, page }) {
            self.by_page.remove(&(old.page, id));
        }
        self.by_page.insert((page, id));
    }

    fn forget(&mut self, id: &Uuid) {
        if let Some(old) = self.known.remove(id) {
            self.by_page.remove(&(old.page, *id));
        }
    }

    /// Applies what a committed poll learned.
    fn learn(&mut self, learned: Learned, db_now: DateTime<Utc>) {
        for (id, version, page) in learned.read {
            self.remember(id, version, page);
        }
        for id in &learned.gone {
            self.forget(id);
        }
        match learned.cursor {
            Some(cursor) => self.cursor = cursor,
            None => {
                self.cursor = 0;
                self.cycles = self.cycles.wrapping_add(1);
            }
        }
        self.last_now = db_now;
    }
}
