//! Clap definitions of every subcommand and flag.

use std::time::Duration;

use clap::{Args, Parser};

use crate::domain::model::{Checkpoint, RunState};
use crate::domain::report::{AttentionFilter, ReportFilter};
use crate::domain::signals::{self, Thresholds};
use crate::sandbox::fixture::FixtureConfig;
use crate::sandbox::sim::{RunConfig, SeedConfig};
use crate::store::connect::{ConnectError, Target};

#[derive(Debug, Parser)]
#[command(
    name = "bootstrap-console",
    version,
    about,
    long_about = "Terminal operations console for the legacy space publication bootstrap rollout. \
                  Without a subcommand it opens the live console (like `watch`).",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Subcommand>,
    /// Options of the live console when no subcommand is given.
    #[command(flatten)]
    pub(crate) watch: WatchArgs,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Subcommand {
    /// Open the live console on a database (the default without a subcommand).
    Watch(WatchArgs),
    /// Run a simulated rollout on a private PostgreSQL and watch it (nothing to set up).
    Demo(DemoArgs),
    /// Run simulated workers and document writers against a database (staging rehearsal,
    /// benchmark load).
    Simulate(SimulateArgs),
    /// Generate the scale fixture on an empty rehearsal database: 100,000 spaces over 1,000
    /// tenants with their items and leases by default (for the benchmark, `simulate --no-seed`
    /// and trying the console at fleet scale).
    Fixture(FixtureArgs),
    /// The board as a table (or `--json`); the exit code says whether anything needs an operator.
    Status(StatusArgs),
    /// Check the ledger's invariants: the inconsistencies where retry is the wrong answer
    /// (exit 1 when there are findings).
    Check(CheckArgs),
    /// Retry failed or canceled spaces (by space or bootstrap id, or by filter).
    Retry(ActionArgs),
    /// Cancel queued or running spaces (by space or bootstrap id, or by filter).
    Cancel(ActionArgs),
    /// Mutation leases.
    Lease {
        #[command(subcommand)]
        command: LeaseCommand,
    },
    /// The audit log of applied actions.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Print the SQL that grants a role exactly what the console needs, for review (never run
    /// by this command): an operator, or with --read-only an observer.
    Grants(GrantsArgs),
    /// Apply the console's own schema (the audit table) to the target database. Idempotent;
    /// never runs a platform migration. Run it as the role that is to own the audit log (the
    /// ledger's owner, or a superuser), never as the console's operator role.
    Migrate(ConnectArgs),
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Start a private PostgreSQL with the sandbox schema, print its URL and keep it running
    /// until Ctrl-C, SIGTERM or SIGHUP; then stop it and delete it.
    Sandbox {
        /// Create only the platform stand-in tables (no migration 0009, no console schema).
        #[arg(long)]
        platform_only: bool,
        /// Start a streaming hot standby too (its URL is printed as BOOTSTRAP_CONSOLE_READ_URL).
        #[arg(long)]
        replica: bool,
    },
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum AuditCommand {
    /// List the most recent audit records in scope, newest first: when, what, its outcome,
    /// the space, the tenant, who and why.
    List(AuditListArgs),
    /// Recompute the audit log's hash chain and name the first record that was changed,
    /// removed or reordered (exit 1 if one was).
    Verify(AuditVerifyArgs),
}

#[derive(Debug, Clone, Args)]
pub(crate) struct AuditListArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    /// Only this tenant's records.
    #[arg(long, value_parser = tenant_scope)]
    pub(crate) tenant: Option<String>,
    /// How many records, newest first.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=10000))]
    pub(crate) limit: u16,
    /// Machine-readable output (schema `bootstrap-console.audit/v1`, see the README).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct AuditVerifyArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    /// A head hash recorded elsewhere (the `audit chain head:` line after an action, or the
    /// console's log): the chain must still contain it, or records were removed from its end.
    #[arg(long, value_name = "SHA256")]
    pub(crate) expect_head: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct GrantsArgs {
    /// The role to grant to (created NOLOGIN if it does not exist; grant it to people).
    #[arg(long)]
    pub(crate) role: String,
    /// An observer: what `watch`, `status`, `check` and `audit verify` need, and no write.
    #[arg(long)]
    pub(crate) read_only: bool,
    /// The schema of the ledger tables.
    #[arg(long, default_value = "public")]
    pub(crate) schema: String,
    /// Also grant CONNECT on this database (only needed where it was revoked from PUBLIC).
    #[arg(long)]
    pub(crate) database: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum LeaseCommand {
    /// Remove an orphaned mutation lease (its writer is gone).
    Remove(LeaseRemoveArgs),
}

/// The thresholds behind the signals (defaults from domain contract §2, see `crate::domain`).
#[derive(Debug, Clone, Args)]
pub(crate) struct ThresholdArgs {
    /// A mutation lease older than this many minutes is an orphan suspect.
    #[arg(long, default_value_t = 15.0, allow_hyphen_values = true, value_parser = orphan_minutes)]
    pub(crate) orphan_after_mins: f64,
    /// A queued or running job unchanged for this many minutes is stuck.
    #[arg(long, default_value_t = 10.0, allow_hyphen_values = true, value_parser = minutes)]
    pub(crate) stuck_after_mins: f64,
    /// A running job with less than this share of its lease window left has a late heartbeat.
    #[arg(long, default_value_t = 1.0 / 3.0, allow_hyphen_values = true, value_parser = fraction)]
    pub(crate) heartbeat_late_fraction: f64,
    /// A worker lease expired longer than this many minutes ago, not reclaimed by a worker,
    /// needs an operator (until then it is watched).
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true, value_parser = minutes)]
    pub(crate) reclaim_grace_mins: f64,
}

impl Default for ThresholdArgs {
    fn default() -> Self {
        Self {
            orphan_after_mins: 15.0,
            stuck_after_mins: 10.0,
            heartbeat_late_fraction: 1.0 / 3.0,
            reclaim_grace_mins: 1.0,
        }
    }
}

impl ThresholdArgs {
    /// The thresholds (each value was checked when it was parsed).
    pub(crate) fn thresholds(&self) -> Result<Thresholds, String> {
        Ok(Thresholds {
            orphan_after: signals::minutes(self.orphan_after_mins),
            stuck_after: signals::minutes(self.stuck_after_mins),
            heartbeat_late_fraction: self.heartbeat_late_fraction,
            reclaim_grace: signals::minutes(self.reclaim_grace_mins),
            ..Thresholds::default()
        })
    }
}

/// Which spaces: the filters of `status` and of bulk actions.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct FilterArgs {
    /// Only this tenant (also the scope: nothing outside it is shown or touched).
    #[arg(long, value_parser = tenant_scope)]
    pub(crate) tenant: Option<String>,
    /// Only these run states (repeatable).
    #[arg(long)]
    pub(crate) state: Vec<RunState>,
    /// Only these checkpoints (repeatable).
    #[arg(long)]
    pub(crate) checkpoint: Vec<Checkpoint>,
    /// Only spaces that need an operator (`any`, the default), only those watched (`watch`), or
    /// only one attention class.
    #[arg(long, num_args = 0..=1, default_missing_value = "any")]
    pub(crate) attention: Option<AttentionFilter>,
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,
}

impl FilterArgs {
    /// The filters as the domain's report takes them.
    pub(crate) fn report_filter(&self) -> ReportFilter {
        ReportFilter {
            states: self.state.clone(),
            checkpoints: self.checkpoint.clone(),
            attention: self.attention,
        }
    }

    /// Whether any filter besides the tenant scope was given.
    pub(crate) fn selects(&self) -> bool {
        !self.state.is_empty() || !self.checkpoint.is_empty() || self.attention.is_some()
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
    #[command(flatten)]
    pub(crate) filter: FilterArgs,
    /// Machine-readable output (schema `bootstrap-console.status/v2`, see the README).
    #[arg(long)]
    pub(crate) json: bool,
    /// More columns: full ids, worker, lease, error message.
    #[arg(long)]
    pub(crate) wide: bool,
    #[command(flatten)]
    pub(crate) gate: GateArgs,
}

/// `check`: the ledger's invariants, over the scope.
#[derive(Debug, Clone, Args)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
    /// Only this tenant.
    #[arg(long, value_parser = tenant_scope)]
    pub(crate) tenant: Option<String>,
    /// Machine-readable output (schema `bootstrap-console.check/v1`, see the README).
    #[arg(long)]
    pub(crate) json: bool,
    /// Bootstraps per statement of the item checks (each reads only their items).
    #[arg(long, default_value_t = crate::domain::health::BATCH, allow_hyphen_values = true, value_parser = batch_size)]
    pub(crate) batch: i64,
}

/// `status --until`: wait for the rollout instead of reporting it once.
#[derive(Debug, Clone, Args)]
pub(crate) struct GateArgs {
    /// Wait until every space in scope has reached this checkpoint (exit 0); stop at once with
    /// exit 1 when a space fails, is canceled or is blocked by an orphan-suspect lease.
    #[arg(long, value_name = "CHECKPOINT", conflicts_with_all = ["json", "wide", "state", "checkpoint", "attention"])]
    pub(crate) until: Option<Checkpoint>,
    /// Give up after this long (`90s`, `30m`, `2h`, `1h30m`): exit 9.
    #[arg(long, value_name = "DURATION", requires = "until", value_parser = crate::domain::duration::parse)]
    pub(crate) timeout: Option<Duration>,
    /// Keep waiting through failures, cancels and orphan-blocked spaces (until done or the
    /// timeout).
    #[arg(long, requires = "until")]
    pub(crate) keep_going: bool,
    /// Seconds between readings while waiting.
    #[arg(
        long = "every",
        value_name = "SECONDS",
        default_value_t = 10.0,
        requires = "until",
        allow_hyphen_values = true,
        value_parser = every_seconds
    )]
    pub(crate) every: f64,
}

/// A number as the operator wrote it, refused with a sentence unless it is a finite number in
/// `range` (of `unit`s): never clamped, never "NaN", and a negative one is refused for what it
/// is (clap would take `-1` for a flag and advise `-- -1`).
fn number_in(text: &str, unit: &str, range: std::ops::RangeInclusive<f64>) -> Result<f64, String> {
    let said = crate::text::clean(text, 40);
    let value = text
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{said:?} is not a number of {unit}"))?;
    if !range.contains(&value) {
        return Err(format!(
            "{said} is outside {} to {} {unit}",
            range.start(),
            range.end()
        ));
    }
    Ok(value)
}

/// A whole number as the operator wrote it, refused with a sentence of the console's own
/// unless it is one in `range` (of `unit`), as [`number_in`] refuses other numbers.
fn whole_in(text: &str, unit: &str, range: std::ops::RangeInclusive<i64>) -> Result<i64, String> {
    let said = crate::text::clean(text, 40);
    let value = number_in(text, unit, f64::MIN..=f64::MAX)?;
    if value.fract() != 0.0 {
        return Err(format!("{said} is not a whole number of {unit}"));
    }
    if value < *range.start() as f64 || value > *range.end() as f64 {
        return Err(format!(
            "{said} is outside {} to {} {unit}",
            range.start(),
            range.end()
        ));
    }
    Ok(value as i64)
}

/// How many spaces one command or one bulk action may touch: 1 to 100,000.
fn space_count(text: &str) -> Result<usize, String> {
    whole_in(text, "spaces", 1..=100_000).map(|n| n as usize)
}

/// A bootstrap's row version, as `--row-version` demands it.
fn row_version(text: &str) -> Result<i32, String> {
    whole_in(text, "(a row version)", 0..=i64::from(i32::MAX)).map(|n| n as i32)
}

/// How many bootstraps `check` reads at a time: 1 to 100,000.
fn batch_size(text: &str) -> Result<i64, String> {
    whole_in(text, "bootstraps", 1..=100_000)
}

/// Seconds between the gate's readings: 0.5 to 3600.
fn every_seconds(text: &str) -> Result<f64, String> {
    number_in(text, "seconds", 0.5..=3600.0)
}

/// Seconds between polls: what the poller can keep (0.5 s to 60 s).
fn interval_seconds(text: &str) -> Result<f64, String> {
    let range =
        crate::poller::MIN_INTERVAL.as_secs_f64()..=crate::poller::MAX_INTERVAL.as_secs_f64();
    number_in(text, "seconds", range)
}

/// Seconds of slack for late change stamps: 0 to 3600.
fn slack_seconds(text: &str) -> Result<f64, String> {
    number_in(text, "seconds", 0.0..=3600.0)
}

/// Seconds to wait for an action's answer: 0.1 to 3600.
fn deadline_seconds(text: &str) -> Result<f64, String> {
    number_in(text, "seconds", 0.1..=3600.0)
}

/// Minutes for a threshold: more than none, at most a week.
fn minutes(text: &str) -> Result<f64, String> {
    let value = number_in(text, "minutes", 0.0..=10_080.0)?;
    if value == 0.0 {
        return Err("0 minutes would flag every space: give more than 0".into());
    }
    Ok(value)
}

/// The least orphan threshold, in minutes: the database's lease removal refuses a shorter one
/// (console schema unit 0006), a writer that young being at work.
pub(crate) const LEAST_ORPHAN_AFTER_MINS: f64 = 1.0;

/// An orphan threshold: [`minutes`], and at least [`LEAST_ORPHAN_AFTER_MINS`].
fn orphan_minutes(text: &str) -> Result<f64, String> {
    let value = minutes(text)?;
    if value < LEAST_ORPHAN_AFTER_MINS {
        return Err(format!(
            "an orphan threshold under {LEAST_ORPHAN_AFTER_MINS} minute would call a writer at \
             work an orphan: give {LEAST_ORPHAN_AFTER_MINS} or more"
        ));
    }
    Ok(value)
}

/// A share strictly between 0 and 1.
fn fraction(text: &str) -> Result<f64, String> {
    let value = number_in(text, "(a share of the lease window)", f64::MIN..=f64::MAX)?;
    if value <= 0.0 || value >= 1.0 {
        return Err(format!(
            "{} is not between 0 and 1 (a share of the lease window)",
            crate::text::clean(text, 40)
        ));
    }
    Ok(value)
}

/// A tenant scope: never empty — an unset shell variable must not mean "every tenant".
fn tenant_scope(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        Err(
            "an empty tenant is not a scope (it would mean every tenant): name the tenant, \
             or leave --tenant out to mean all of them"
                .into(),
        )
    } else {
        Ok(value.to_string())
    }
}

/// Why, and whether to ask: shared by every command that writes.
#[derive(Debug, Clone, Args)]
pub(crate) struct ConfirmArgs {
    /// Why: recorded in the audit log with the action (at most 500 characters).
    #[arg(
        long,
        required_unless_present = "reason_file",
        conflicts_with = "reason_file"
    )]
    pub(crate) reason: Option<String>,
    /// Read the reason from this file (`-` for standard input; the typed confirmation then
    /// reads the terminal itself, or --yes is needed).
    #[arg(long, value_name = "PATH")]
    pub(crate) reason_file: Option<std::path::PathBuf>,
    /// Do not ask for confirmation (scripts).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Show the plan and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Re-drive an earlier request by its id (printed by every run): what it applied is
    /// reported as already applied, never applied twice.
    #[arg(long, value_name = "UUID")]
    pub(crate) request_id: Option<uuid::Uuid>,
    /// Stop waiting for an action's answer after this many seconds; its outcome is then
    /// looked up by request id.
    #[arg(long, default_value_t = 15.0, allow_hyphen_values = true, value_parser = deadline_seconds)]
    pub(crate) apply_deadline_secs: f64,
    /// Write to this listed host (host:port, or the host alone) even when the split-brain
    /// guard refuses: several hosts answer as primaries, or this one is on a lower timeline
    /// than one written to before. Audited as forced.
    #[arg(long, value_name = "HOST")]
    pub(crate) primary: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct ActionArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    /// Space or bootstrap ids; or none, and select spaces with the filters instead.
    pub(crate) ids: Vec<String>,
    #[command(flatten)]
    pub(crate) filter: FilterArgs,
    #[command(flatten)]
    pub(crate) confirm: ConfirmArgs,
    /// The most spaces one command may act on.
    #[arg(long, default_value_t = 100, allow_hyphen_values = true, value_parser = space_count)]
    pub(crate) limit: usize,
    /// Act only if the bootstrap is still at this row version (with exactly one id).
    #[arg(long, allow_hyphen_values = true, value_parser = row_version)]
    pub(crate) row_version: Option<i32>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct LeaseRemoveArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    /// The lease id.
    pub(crate) lease_id: String,
    /// Restrict to this tenant.
    #[arg(long, value_parser = tenant_scope)]
    pub(crate) tenant: Option<String>,
    #[command(flatten)]
    pub(crate) confirm: ConfirmArgs,
    /// Remove even a lease that is not an orphan suspect (younger than the orphan threshold,
    /// or kept live by its heartbeat); the confirmation is then its whole id.
    #[arg(long)]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,
}

/// How the live console looks, for `watch` and `demo`.
#[derive(Debug, Clone, Args)]
pub(crate) struct DisplayArgs {
    /// Draw with ASCII only, for terminals without Unicode line drawing.
    #[arg(long)]
    pub(crate) ascii: bool,
    /// Seconds between polls (change it at runtime with + and -).
    #[arg(long, default_value_t = 2.0, allow_hyphen_values = true, value_parser = interval_seconds)]
    pub(crate) interval: f64,
    /// How far behind the database clock a writer may stamp a change (its clock lag plus its
    /// transaction's duration) and still have it shown at the next poll; later stamps show
    /// within one resync cycle.
    #[arg(long, default_value_t = 5.0, allow_hyphen_values = true, value_parser = slack_seconds)]
    pub(crate) delta_slack_secs: f64,
    /// The most spaces one bulk action may touch.
    #[arg(long, default_value_t = 100, allow_hyphen_values = true, value_parser = space_count)]
    pub(crate) bulk_cap: usize,
    /// Stop waiting for an action's answer after this many seconds (Esc stops sooner); its
    /// outcome is then looked up by request id.
    #[arg(long, default_value_t = 15.0, allow_hyphen_values = true, value_parser = deadline_seconds)]
    pub(crate) apply_deadline_secs: f64,
}

/// A deadline in seconds, as given on the command line (checked when parsed).
pub(crate) fn deadline(seconds: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(deadline_seconds(&seconds.to_string())?).map_err(|e| e.to_string())
}

/// `watch`: where to look, what may be touched, how it looks.
#[derive(Debug, Clone, Args)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
    /// Show and act on this tenant only.
    #[arg(long, value_parser = tenant_scope)]
    pub(crate) tenant: Option<String>,
    /// Disable every action.
    #[arg(long)]
    pub(crate) read_only: bool,
    /// Environment label drawn prominently in the header, e.g. `prod` or `staging`.
    #[arg(long)]
    pub(crate) label: Option<String>,
    #[command(flatten)]
    pub(crate) display: DisplayArgs,
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,
}

/// Where to connect: `--database-url`, else `DATABASE_URL`, else the `PG*` variables.
#[derive(Debug, Clone, Args)]
pub(crate) struct ConnectArgs {
    /// PostgreSQL URL, e.g. postgres://user@host:5432/platform?sslmode=verify-full
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub(crate) database_url: Option<String>,
}

impl ConnectArgs {
    pub(crate) fn target(&self) -> Result<Target, ConnectError> {
        Target::from_url_or_env(self.database_url.as_deref())
    }
}

/// Where polls read when not where actions write: a hot standby.
#[derive(Debug, Clone, Args)]
pub(crate) struct ReadArgs {
    /// A hot standby of the database for every poll and report (plans and actions still go to
    /// --database-url, the primary), e.g. postgres://observer@replica:5432/platform
    #[arg(long, env = "BOOTSTRAP_CONSOLE_READ_URL", hide_env_values = true)]
    pub(crate) read_url: Option<String>,
}

impl ReadArgs {
    /// The standby to read, if one is named (an empty value names none).
    pub(crate) fn target(&self) -> Result<Option<Target>, ConnectError> {
        match self.read_url.as_deref().map(str::trim) {
            Some(url) if !url.is_empty() => Target::from_url_or_env(Some(url)).map(Some),
            _ => Ok(None),
        }
    }
}

/// `demo`: a simulated rollout on a private PostgreSQL.
#[derive(Debug, Clone, Args)]
pub(crate) struct DemoArgs {
    #[command(flatten)]
    pub(crate) rollout: RolloutArgs,
    /// Start a streaming hot standby too, and watch through it (actions still go to the
    /// primary): the header shows how far it lags.
    #[arg(long)]
    pub(crate) replica: bool,
}

/// The size of a seeded rollout and the faults of the simulated platform.
#[derive(Debug, Clone, Args)]
pub(crate) struct RolloutArgs {
    /// Seed of every random choice: the same seed gives the same data and the same faults.
    #[arg(long, default_value_t = 2026)]
    pub(crate) seed: u64,
    #[arg(long, default_value_t = 6)]
    pub(crate) tenants: u32,
    /// Knowledge spaces per tenant.
    #[arg(long, default_value_t = 20)]
    pub(crate) spaces: u32,
    /// Simulated bootstrap workers.
    #[arg(long, default_value_t = 4)]
    pub(crate) workers: u32,
    /// Probability that one document rebuild fails (failing its job).
    #[arg(long, default_value_t = 0.0015)]
    pub(crate) item_failure_rate: f64,
    /// Probability that a worker crashes while holding a job (its lease then expires).
    #[arg(long, default_value_t = 0.04)]
    pub(crate) worker_crash_rate: f64,
    /// Probability that a document is very slow (its worker's heartbeat runs late).
    #[arg(long, default_value_t = 0.004)]
    pub(crate) slow_rate: f64,
    /// Share of unmigrated spaces whose document writer holds a lease at the start.
    #[arg(long, default_value_t = 0.12)]
    pub(crate) writer_share: f64,
    /// Share of those writers that crashed long ago (orphan leases).
    #[arg(long, default_value_t = 0.35)]
    pub(crate) orphan_share: f64,
    /// Probability that a live writer crashes instead of releasing its lease.
    #[arg(long, default_value_t = 0.25)]
    pub(crate) writer_crash_rate: f64,
    /// Multiplies every simulated duration (0.5 runs twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub(crate) time_scale: f64,
    /// Worker lease length in seconds (before time scaling).
    #[arg(long, default_value_t = 12)]
    pub(crate) lease_ttl_secs: u64,
    /// Rebuild time of one document in milliseconds (before time scaling).
    #[arg(long, default_value_t = 60)]
    pub(crate) document_ms: u64,
    /// Turn every fault off.
    #[arg(long)]
    pub(crate) no_faults: bool,
    /// Seconds between the text summaries printed when the output is not a terminal.
    #[arg(long, default_value_t = 2)]
    pub(crate) report_every: u64,
    /// Print text summaries even on a terminal, instead of opening the live console.
    #[arg(long)]
    pub(crate) text: bool,
    #[command(flatten)]
    pub(crate) display: DisplayArgs,
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,
}

impl RolloutArgs {
    pub(crate) fn seed_config(&self) -> SeedConfig {
        SeedConfig {
            seed: self.seed,
            tenants: self.tenants,
            spaces_per_tenant: self.spaces,
            writer_share: self.writer_share,
            orphan_share: if self.no_faults {
                0.0
            } else {
                self.orphan_share
            },
            ..SeedConfig::default()
        }
    }

    pub(crate) fn run_config(&self) -> RunConfig {
        let config = RunConfig {
            seed: self.seed,
            workers: self.workers,
            lease_ttl: Duration::from_secs(self.lease_ttl_secs),
            document_time: Duration::from_millis(self.document_ms),
            item_failure_rate: self.item_failure_rate,
            worker_crash_rate: self.worker_crash_rate,
            slow_document_rate: self.slow_rate,
            writer_crash_rate: self.writer_crash_rate,
            time_scale: self.time_scale,
            ..RunConfig::default()
        };
        if self.no_faults {
            config.fault_free()
        } else {
            config
        }
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct FixtureArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    /// Knowledge spaces (one bootstrap each).
    #[arg(long, default_value_t = 100_000)]
    pub(crate) spaces: u32,
    #[arg(long, default_value_t = 1_000)]
    pub(crate) tenants: u32,
    /// Frozen items of each captured space.
    #[arg(long, default_value_t = 50)]
    pub(crate) items_per_space: u32,
    /// The same seed gives the same ids.
    #[arg(long, default_value_t = 7)]
    pub(crate) seed: u64,
    /// Time-ordered space ids (UUIDv7, a millisecond apart), which share their first digits
    /// as the platform's real ids do.
    #[arg(long)]
    pub(crate) v7_ids: bool,
    /// Workers of the platform: as many jobs run, each under a live 60-s lease; the rest of
    /// the unfinished spaces wait queued.
    #[arg(long, default_value_t = 500)]
    pub(crate) workers: u32,
    /// Create the platform stand-in tables first if the database has none (rehearsal
    /// databases only; never on a real platform database).
    #[arg(long)]
    pub(crate) create_standin: bool,
}

impl FixtureArgs {
    pub(crate) fn config(&self) -> FixtureConfig {
        FixtureConfig {
            spaces: self.spaces,
            tenants: self.tenants,
            items_per_space: self.items_per_space,
            seed: self.seed,
            workers: self.workers,
            v7_ids: self.v7_ids,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct SimulateArgs {
    #[command(flatten)]
    pub(crate) connect: ConnectArgs,
    #[command(flatten)]
    pub(crate) rollout: RolloutArgs,
    /// Do not seed: run workers and writers on the ledger the database already holds.
    #[arg(long)]
    pub(crate) no_seed: bool,
    /// Seed more spaces even though the database already holds a ledger.
    #[arg(long, conflicts_with = "no_seed")]
    pub(crate) seed_anyway: bool,
    /// Create the platform stand-in tables first if the database has none (rehearsal
    /// databases only; never on a real platform database).
    #[arg(long)]
    pub(crate) create_standin: bool,
    /// Stop after this many seconds (default: run until Ctrl-C).
    #[arg(long)]
    pub(crate) duration_secs: Option<u64>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_least_orphan_threshold_is_the_one_the_databases_removal_keeps() {
        let unit = crate::store::schema::CONSOLE_UNITS
            .iter()
            .find(|u| u.name == "0006_action_functions")
            .expect("the action functions' unit");
        assert_eq!(super::LEAST_ORPHAN_AFTER_MINS, 1.0);
        assert!(unit.sql.contains("extract(epoch FROM p_orphan_after) < 60"));
        assert!(super::orphan_minutes("0.5").is_err());
        assert_eq!(super::orphan_minutes("1"), Ok(1.0));
    }
}
