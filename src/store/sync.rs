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
//! 3. the mutation leases, by digest: the server hashes them into buckets and sends the
//!    leases of the buckets whose digest differs from the copy's (see
//!    [`fleet::lease_delta_sql`]), so a poll costs the table's read, not its transfer.
//!
//! The caller gets [`Changes`]: rows to add or replace, ids to drop, and the leases. Rows read
//! again with the version already known are not passed on.
//!
//! # The guarantee
//!
//! A change shows at the next poll when the writer's clock lag plus its transaction's duration
//! is at most the slack (`--delta-slack-secs`, 5 s by default), and always within one resync
//! cycle. The resync is paced by **database time**, not by polls: the slices together take
//! about [`SyncSettings::resync_budget`] (2 ms) of each second watched, measured as they run
//! (what a page costs to read, smoothed), and each slice reads at most
//! [`SyncSettings::max_slice_pages`] pages so its statement stays short. A poll that comes
//! late therefore reads a larger slice only within that bound, never one that makes the next
//! poll later still; and a cycle's length follows from the table's size: about
//! `pages × cost per page ÷ budget` — about a minute for the 100,000-space fixture (4,435
//! pages, measured with `simulate` writing), so some ten minutes for a million spaces if a
//! page costs the same there ([`SyncReport::cycle_estimate`], shown in the
//! Health view). Under `--tenant` the slices still walk
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

mod seen;

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use super::db::{Db, TxKind};
use super::fleet;
use super::replica::{Lsn, Primary, Replication};
use super::rows::{BoardRecord, LeaseRow};
use super::{Layout, StoreError};
use seen::Seen;

/// How the copy is kept current.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SyncSettings {
    /// How far before the last poll's clock a change may be stamped and still be found by the
    /// next poll's delta.
    pub slack: Duration,
    /// The database time the resync slices may take per second watched: the walk's pace.
    pub resync_budget: Duration,
    /// Bounds on the pages one resync slice reads.
    pub min_slice_pages: i64,
    pub max_slice_pages: i64,
}

impl Default for SyncSettings {
    fn default() -> Self {
        Self {
            slack: Duration::from_secs(5),
            resync_budget: Duration::from_millis(2),
            min_slice_pages: 4,
            max_slice_pages: 256,
        }
    }
}

/// What a page is taken to cost until a slice has been timed (a quiet 2-core machine reads a
/// page of the bootstrap table's ids and versions in about 30 µs).
const FIRST_PAGE_COST: Duration = Duration::from_micros(50);
/// Weight of the newest slice in the smoothed cost of a page.
const PAGE_COST_SMOOTHING: f64 = 0.2;
/// The longest wait between slices that earns a larger one (a pause or an outage does not
/// buy a slice the size of the table: [`SyncSettings::max_slice_pages`] bounds it anyway).
const LONGEST_EARNING: Duration = Duration::from_secs(10);

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
    /// The mutation leases: on a first load (`reset`) every one in scope; after that, the
    /// leases of the buckets whose digest changed (see [`fleet::lease_delta_sql`]) — those
    /// that came or changed, and some that did not.
    pub leases: Vec<LeaseRow>,
    /// The leases gone since the last poll, as last read.
    pub leases_gone: Vec<LeaseRow>,
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
    /// About how long a whole cycle takes at the resync's pace (see the module docs).
    pub cycle_estimate: Option<Duration>,
}

/// The sync's memory between polls.
#[derive(Debug)]
struct Mirror {
    /// The clock of the last good poll.
    last_now: DateTime<Utc>,
    /// Each row's version and page.
    seen: Seen,
    cycles: u32,
    /// The next page of the resync walk.
    cursor: i64,
    leases: LeaseMirror,
}

/// What the copy knows of the leases: each bucket's digest and leases.
#[derive(Debug, Default, Clone)]
struct LeaseMirror {
    buckets: HashMap<i32, LeaseBucket>,
}

#[derive(Debug, Default, Clone)]
struct LeaseBucket {
    count: i32,
    digest: i64,
    leases: Vec<LeaseRow>,
}

impl LeaseMirror {
    fn known(&self) -> Vec<(i32, i32, i64)> {
        self.buckets
            .iter()
            .map(|(bucket, b)| (*bucket, b.count, b.digest))
            .collect()
    }

    /// What `delta` changes (to [`Self::apply`] once the poll committed), and what it says:
    /// the leases of the changed buckets, and those gone. Unchanged buckets are not copied.
    fn after(&self, delta: fleet::LeaseDelta) -> (LeaseUpdate, Vec<LeaseRow>, Vec<LeaseRow>) {
        let mut fresh: HashMap<i32, Vec<LeaseRow>> = HashMap::new();
        for (bucket, lease) in delta.leases {
            fresh.entry(bucket).or_default().push(lease);
        }
        let listed: HashSet<i32> = delta.digests.iter().map(|(bucket, ..)| *bucket).collect();
        let mut gone = Vec::new();
        let mut read = Vec::new();
        for (bucket, leases) in &fresh {
            if let Some(old) = self.buckets.get(bucket) {
                // Gone: a lease no longer there, or one now on another space (its old place
                // is freed).
                let now: HashMap<Uuid, (&str, Uuid)> = leases
                    .iter()
                    .map(|l| (l.id, (l.tenant_id.as_str(), l.knowledge_space_id)))
                    .collect();
                gone.extend(
                    old.leases
                        .iter()
                        .filter(|l| {
                            now.get(&l.id) != Some(&(l.tenant_id.as_str(), l.knowledge_space_id))
                        })
                        .cloned(),
                );
            }
            read.extend(leases.iter().cloned());
        }
        // A bucket no longer listed holds no lease now.
        for (bucket, old) in &self.buckets {
            if !listed.contains(bucket) {
                gone.extend(old.leases.iter().cloned());
            }
        }
        let update = LeaseUpdate {
            digests: delta.digests,
            fresh,
        };
        (update, read, gone)
    }

    /// Takes what a committed poll read: every bucket's digest, the changed buckets' leases.
    fn apply(&mut self, update: LeaseUpdate) {
        let mut fresh = update.fresh;
        let listed: HashSet<i32> = update.digests.iter().map(|(bucket, ..)| *bucket).collect();
        self.buckets.retain(|bucket, _| listed.contains(bucket));
        for (bucket, count, digest) in update.digests {
            let held = self.buckets.entry(bucket).or_default();
            held.count = count;
            held.digest = digest;
            if let Some(leases) = fresh.remove(&bucket) {
                held.leases = leases;
            }
        }
    }
}

/// What one poll's lease delta changes in the [`LeaseMirror`].
#[derive(Debug, Default)]
struct LeaseUpdate {
    digests: Vec<(i32, i32, i64)>,
    fresh: HashMap<i32, Vec<LeaseRow>>,
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
    /// The slice read: its pages and how long its statement took.
    slice: Option<(i64, Duration)>,
    /// What the leases' delta changes.
    leases: Option<LeaseUpdate>,
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
    /// The resync's pace: what reading a page costs (smoothed) and when the last slice ran.
    page_cost: Duration,
    last_slice: Option<std::time::Instant>,
    /// How often polls run, as last told: the least and most a slice reads bound the pace.
    period: Duration,
}

impl LedgerSync {
    pub fn new(tenant: Option<String>, settings: SyncSettings) -> Self {
        Self {
            tenant,
            settings,
            mirror: None,
            primary_readings: VecDeque::new(),
            behind: chrono::Duration::zero(),
            page_cost: FIRST_PAGE_COST,
            last_slice: None,
            period: Duration::from_secs(2),
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

    /// One poll. `period` is how often polls happen (the first slice's size, and the bounds
    /// of the resync's pace). A failed
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
        self.period = period;
        let started = std::time::Instant::now();
        let earned = self
            .last_slice
            .map_or(period, |at| started.saturating_duration_since(at))
            .min(LONGEST_EARNING);
        let mut tx = db.begin(TxKind::Snapshot).await?;
        let outcome = match &self.mirror {
            None => self
                .load(&mut tx, layout, primary)
                .await
                .map(|(c, m)| (c, Err(m))),
            Some(mirror) => self
                .refresh(&mut tx, layout, mirror, earned, primary)
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
        if let Ok(learned) = &learned
            && let Some((pages, took)) = learned.slice
        {
            self.timed_slice(pages, took);
            self.last_slice = Some(started);
        }
        if self.last_slice.is_none() {
            self.last_slice = Some(started);
        }
        let cycles_before = self.mirror.as_ref().map(|m| m.cycles);
        match (learned, &mut self.mirror) {
            (Err(loaded), mirror) => *mirror = Some(loaded),
            (Ok(learned), Some(mirror)) => mirror.learn(learned, changes.db_now),
            // A refresh only happens with a mirror.
            (Ok(_), None) => {}
        }
        changes.report.cycle_estimate = Some(self.cycle_estimate(changes.report.table_pages));
        if let Some(mirror) = &self.mirror {
            changes.report.cycles = mirror.cycles;
            changes.report.cycle_page = mirror.cursor;
            if cycles_before.is_some_and(|before| before != mirror.cycles) {
                tracing::info!(
                    cycle = mirror.cycles,
                    pages = changes.report.table_pages,
                    page_cost_us = self.page_cost.as_micros() as u64,
                    "resync cycle complete (a cycle takes about {}s at this pace)",
                    self.cycle_estimate(changes.report.table_pages).as_secs()
                );
            }
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
        let delta = fleet::lease_delta(conn, layout, tenant, &[]).await?;
        let mut lease_mirror = LeaseMirror::default();
        let (update, leases, _) = lease_mirror.after(delta);
        lease_mirror.apply(update);
        report.statements += 1;
        report.rows_read = upserts.len() + leases.len();
        report.table_pages = pages;
        let mirror = Mirror {
            last_now: db_now,
            seen: Seen::loaded(upserts.iter().map(|row| (row.id, row.version, row.page))),
            cycles: 0,
            cursor: 0,
            leases: lease_mirror,
        };
        Ok((
            Changes {
                db_now,
                replication,
                reset: true,
                upserts,
                deletes: Vec::new(),
                leases,
                leases_gone: Vec::new(),
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
        earned: Duration,
        primary: &Primary,
    ) -> Result<(Changes, Learned), StoreError> {
        let tenant = self.tenant.as_deref();
        let mut report = SyncReport::default();
        let mut learned = Learned::default();
        // The clock's round trip is what any statement costs beyond its work: taken off the
        // slice's time, so that a page's cost is the database's, not the network's.
        let round_trip = std::time::Instant::now();
        let (db_now, pages, replication) = self.clock(conn, primary).await?;
        let round_trip = round_trip.elapsed();
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
        let slice = self.slice_pages(earned);
        let end = from + slice;
        let to = (end < pages).then_some(end);
        let timed = std::time::Instant::now();
        let versions = fleet::versions(conn, tenant, from, to).await?;
        learned.slice = Some((
            to.unwrap_or(pages).saturating_sub(from).max(1),
            timed.elapsed().saturating_sub(round_trip),
        ));
        report.statements += 1;
        report.rows_read += versions.len();
        // What this poll's delta already read counts as known: it is not read again.
        let fresh: HashMap<Uuid, u32> = learned
            .read
            .iter()
            .map(|(id, v, _)| (*id, seen::narrow(*v)))
            .collect();
        let present: HashSet<Uuid> = versions.iter().map(|(id, _, _)| *id).collect();
        let mut recheck: Vec<Uuid> = mirror
            .seen
            .on_pages(from, to)
            .filter(|id| !present.contains(id) && !fresh.contains_key(id))
            .collect();
        let missing: HashSet<Uuid> = recheck.iter().copied().collect();
        for (id, version, page) in versions {
            let known = fresh.get(&id).copied().or_else(|| mirror.seen.version(&id));
            if known == Some(seen::narrow(version)) {
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

        // 3. The leases of the buckets that changed.
        let delta = fleet::lease_delta(conn, layout, tenant, &mirror.leases.known()).await?;
        report.statements += 1;
        report.rows_read += delta.digests.len() + delta.leases.len();
        let (update, read, gone) = mirror.leases.after(delta);
        changes.leases = read;
        changes.leases_gone = gone;
        learned.leases = Some(update);
        report.table_pages = pages;
        changes.report = report;
        Ok((changes, learned))
    }

    /// Pages for a slice after `earned` of watching since the last one: what the budget
    /// allows at the measured cost of a page, within the bounds.
    fn slice_pages(&self, earned: Duration) -> i64 {
        let allowed = self.settings.resync_budget.as_secs_f64() * earned.as_secs_f64();
        let wanted = (allowed / self.page_cost.as_secs_f64().max(1e-7)).floor() as i64;
        let least = self.settings.min_slice_pages.max(1);
        wanted.clamp(least, self.settings.max_slice_pages.max(least))
    }

    /// Takes a slice's time into the smoothed cost of a page.
    fn timed_slice(&mut self, pages: i64, took: Duration) {
        let per_page = took.as_secs_f64() / pages.max(1) as f64;
        let smoothed = PAGE_COST_SMOOTHING * per_page
            + (1.0 - PAGE_COST_SMOOTHING) * self.page_cost.as_secs_f64();
        self.page_cost = Duration::from_secs_f64(smoothed.clamp(1e-7, 1.0));
    }

    /// How long a cycle over `table_pages` takes at the resync's pace: pages a second as the
    /// budget buys them, within what the least and the most a slice reads allow at the poll
    /// period.
    fn cycle_estimate(&self, table_pages: i64) -> Duration {
        let period = self.period.min(LONGEST_EARNING).as_secs_f64().max(0.001);
        let budget = self.settings.resync_budget.as_secs_f64();
        let least = self.settings.min_slice_pages.max(1) as f64 / period;
        let most = self.settings.max_slice_pages.max(1) as f64 / period;
        let per_second =
            (budget / self.page_cost.as_secs_f64().max(1e-7)).clamp(least, most.max(least));
        // A cycle takes one poll at least.
        let seconds = (table_pages.max(0) as f64 / per_second).max(period);
        Duration::from_secs_f64(seconds.min(1e7))
    }
}

impl Mirror {
    /// Passes on the rows whose version is new; every row read is remembered.
    fn sort_out(&self, rows: Vec<BoardRecord>, out: &mut Vec<BoardRecord>, learned: &mut Learned) {
        for row in rows {
            learned.read.push((row.id, row.version, row.page));
            if self.seen.version(&row.id) != Some(seen::narrow(row.version)) {
                out.push(row);
            }
        }
    }

    /// Applies what a committed poll learned.
    fn learn(&mut self, mut learned: Learned, db_now: DateTime<Utc>) {
        if let Some(update) = learned.leases.take() {
            self.leases.apply(update);
        }
        self.seen.learn(learned.read, &learned.gone);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sync() -> LedgerSync {
        LedgerSync::new(None, SyncSettings::default())
    }

    #[test]
    fn a_slice_reads_what_the_budget_buys_at_the_measured_cost_of_a_page() {
        let mut sync = sync();
        // 2 ms a second at 50 µs a page: 40 pages a second watched.
        assert_eq!(sync.slice_pages(Duration::from_secs(1)), 40);
        assert_eq!(sync.slice_pages(Duration::from_secs(2)), 80);
        // Pages that cost twice as much (a busy host): half as many, so the database time
        // per second stays the budget.
        for _ in 0..50 {
            sync.timed_slice(100, Duration::from_millis(10));
        }
        assert!((sync.page_cost.as_secs_f64() - 100e-6).abs() < 1e-7);
        assert!((39..=40).contains(&sync.slice_pages(Duration::from_secs(2))));
    }

    #[test]
    fn a_late_poll_gets_a_bounded_slice_so_slowness_does_not_feed_itself() {
        let sync = sync();
        let bounds = SyncSettings::default();
        // However late, never more than the bound; however soon, at least the least.
        assert_eq!(sync.slice_pages(LONGEST_EARNING), 256);
        assert_eq!(sync.slice_pages(Duration::ZERO), bounds.min_slice_pages);
        // The database time a slice takes grows with the wait, not beyond the budget's share:
        // a poll every 1 s and one every 4 s cost the same per second.
        let per_second = |wait: u64| {
            sync.slice_pages(Duration::from_secs(wait)) as f64 * sync.page_cost.as_secs_f64()
                / wait as f64
        };
        assert!((per_second(1) - per_second(4)).abs() < 1e-4);
        assert!(per_second(1) <= bounds.resync_budget.as_secs_f64());
    }

    #[test]
    fn the_cycle_follows_the_table_size() {
        let sync = sync();
        // 4,000 pages (about 100,000 spaces) at 50 µs a page and 2 ms a second: 100 s.
        assert_eq!(sync.cycle_estimate(4_000), Duration::from_secs(100));
        assert_eq!(sync.cycle_estimate(40_000), Duration::from_secs(1_000));
    }

    fn lease(n: u128) -> LeaseRow {
        LeaseRow {
            id: Uuid::from_u128(n),
            tenant_id: "acme".into(),
            knowledge_space_id: Uuid::from_u128(1000 + n),
            operation: "bulk-upload".into(),
            acquired_at: DateTime::from_timestamp(1_800_000_000, 0).expect("time"),
            heartbeat_at: None,
            expires_at: None,
        }
    }

    fn ids(leases: &[LeaseRow]) -> Vec<u128> {
        let mut ids: Vec<u128> = leases.iter().map(|l| l.id.as_u128()).collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn a_lease_delta_reads_the_changed_buckets_and_finds_what_went() {
        // Bucket 1 holds leases 1 and 2, bucket 2 lease 3, bucket 3 lease 4.
        let first = fleet::LeaseDelta {
            digests: vec![(1, 2, 10), (2, 1, 20), (3, 1, 30)],
            leases: vec![(1, lease(1)), (1, lease(2)), (2, lease(3)), (3, lease(4))],
        };
        let mut mirror = LeaseMirror::default();
        let (update, read, gone) = mirror.after(first);
        mirror.apply(update);
        assert_eq!(ids(&read), [1, 2, 3, 4]);
        assert!(gone.is_empty());
        // Lease 2 went and lease 5 came in bucket 1; bucket 2 is unchanged (not sent); bucket
        // 3 emptied (no longer listed).
        let second = fleet::LeaseDelta {
            digests: vec![(1, 2, 11), (2, 1, 20)],
            leases: vec![(1, lease(1)), (1, lease(5))],
        };
        let (update, read, gone) = mirror.after(second);
        mirror.apply(update);
        assert_eq!(ids(&read), [1, 5], "the changed bucket's leases");
        assert_eq!(ids(&gone), [2, 4]);
        let mut known = mirror.known();
        known.sort_unstable();
        assert_eq!(known, [(1, 2, 11), (2, 1, 20)]);
        let held: Vec<LeaseRow> = mirror
            .buckets
            .values()
            .flat_map(|b| b.leases.iter().cloned())
            .collect();
        assert_eq!(ids(&held), [1, 3, 5], "unchanged buckets keep their leases");
        // Lease 1 updated in place onto another space: its old place is freed.
        let mut moved = lease(1);
        moved.knowledge_space_id = Uuid::from_u128(77);
        let third = fleet::LeaseDelta {
            digests: vec![(1, 2, 12), (2, 1, 20)],
            leases: vec![(1, moved.clone()), (1, lease(5))],
        };
        let (_, read, gone) = mirror.after(third);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].knowledge_space_id, lease(1).knowledge_space_id);
        assert!(
            read.iter()
                .any(|l| l.knowledge_space_id == moved.knowledge_space_id)
        );
    }
}
