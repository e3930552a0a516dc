//! `demo` and `simulate`: a simulated rollout, on a private PostgreSQL or a given database.

use super::outln;
use std::process::ExitCode;
use std::time::Duration;

use super::args::{DemoArgs, FixtureArgs, SimulateArgs};
use super::{Failure, RolloutArgs, StopSignals};
use crate::domain::fleet::Fleet;
use crate::domain::session::{Session, SessionOptions};
use crate::domain::signals::Thresholds;
use crate::sandbox::fixture;
use crate::sandbox::sim::{self, SeedReport, Simulation, Stats};
use crate::sandbox::{SandboxDatabase, SandboxSchema};
use crate::store::connect::Target;
use crate::store::schema;
use crate::store::sync::SyncSettings;

pub(super) async fn demo(demo: &DemoArgs) -> Result<ExitCode, Failure> {
    let args = &demo.rollout;
    // Bad flags are refused before anything is started.
    args.thresholds.thresholds().map_err(Failure::Usage)?;
    super::watch::tui_options(&args.display, None, true)?;
    let mut signals = StopSignals::install()?;
    let mut sandbox = SandboxDatabase::start(SandboxSchema::PlatformStandIn).await?;
    outln!("SANDBOX private PostgreSQL at {}", sandbox.url());
    let mut read = None;
    if demo.replica {
        // Started before the rollout is seeded: everything reaches it by streaming.
        sandbox.start_standby().await?;
        let url = sandbox.standby_url().unwrap_or_default();
        outln!("SANDBOX streaming hot standby at {url} (polls read it)");
        read = Some(Target::from_url_or_env(Some(&url))?);
    }
    let outcome = run_demo(&sandbox.target(), read.as_ref(), args, &mut signals).await;
    let stopped = sandbox.stop();
    let code = outcome?;
    stopped.map_err(|e| Failure::Sandbox(e.into()))?;
    super::say("sandbox stopped and deleted.");
    Ok(code)
}

async fn run_demo(
    target: &Target,
    read: Option<&Target>,
    args: &RolloutArgs,
    signals: &mut StopSignals,
) -> Result<ExitCode, Failure> {
    let thresholds = args.thresholds.thresholds().map_err(Failure::Usage)?;
    let mut conn = target.connect().await?;
    let report = sim::seed(&mut conn, &args.seed_config()).await?;
    print_seed_report(&report);
    let pool = target.simulator_pool(args.workers + 4).await?;
    let simulation = Simulation::start(pool, args.run_config(), report.writers);
    let mut session = super::open_session(
        target,
        SessionOptions {
            thresholds,
            ..SessionOptions::default()
        },
    )
    .await?;
    if let Some(read) = read
        && let Err(e) = session.add_reader(read).await
    {
        session.close().await;
        simulation.stop().await;
        return Err(e.into());
    }
    let watched = if interactive(args) {
        let mut options = super::watch::tui_options(&args.display, None, true)?;
        options.thresholds = thresholds;
        super::watch::run_console(session.clone(), options, signals.wait()).await
    } else {
        let every = args.report_every;
        watch_text(
            &session,
            &simulation,
            every,
            None,
            "SANDBOX",
            signals,
            thresholds,
        )
        .await
        .map(|signal| ExitCode::from(signal.map_or(super::exit::DONE, super::exit::by_signal)))
    };
    // Every session ends before the sandbox stops: a poll cut short by the signal rolls back
    // while the server still answers, not in its shutdown.
    simulation.stop().await;
    session.close().await;
    watched
}

pub(super) async fn simulate(args: &SimulateArgs) -> Result<ExitCode, Failure> {
    let thresholds = args
        .rollout
        .thresholds
        .thresholds()
        .map_err(Failure::Usage)?;
    let mut signals = StopSignals::install()?;
    let target = args.connect.target()?;
    let mut conn = target.connect().await?;
    platform_tables(&mut conn, &target, args.create_standin).await?;
    let ledger = schema::ledger_size(&mut conn).await.map_err(store_error)?;
    let writers = if args.no_seed {
        if ledger == 0 {
            return Err(Failure::Refused(format!(
                "the database at {target} holds no ledger to work on: drop --no-seed to seed one"
            )));
        }
        Vec::new()
    } else {
        if ledger > 0 && !args.seed_anyway {
            return Err(Failure::Refused(format!(
                "the database at {target} already holds a ledger ({ledger} bootstraps): pass \
                 --no-seed to run workers on it, or --seed-anyway to add more spaces"
            )));
        }
        let mut config = args.rollout.seed_config();
        // Adding to an existing rollout must not regenerate the same ids.
        config.seed ^= ledger as u64;
        let report = sim::seed(&mut conn, &config).await?;
        print_seed_report(&report);
        report.writers
    };
    let mut run = args.rollout.run_config();
    if args.no_seed {
        // A ledger on the platform's own tables: the workers keep to what those allow.
        run.shape = sim::PlatformShape::probe(&mut conn)
            .await
            .map_err(store_error)?;
        if let Some(notice) = run.shape.notice() {
            super::emit(&format!("{notice}\n"));
        }
    }
    let pool = target.simulator_pool(args.rollout.workers + 4).await?;
    let simulation = Simulation::start(pool, run, writers);
    let session = super::open_session(&target, SessionOptions::default()).await?;
    let duration = args.duration_secs.map(Duration::from_secs);
    let label = format!("SIMULATE {target}");
    let every = args.rollout.report_every;
    let watched = watch_text(
        &session,
        &simulation,
        every,
        duration,
        &label,
        &mut signals,
        thresholds,
    )
    .await;
    simulation.stop().await;
    session.close().await;
    Ok(ExitCode::from(
        watched?.map_or(super::exit::DONE, super::exit::by_signal),
    ))
}

/// A rehearsal needs the platform's tables: the stand-in is created only when asked for.
async fn platform_tables(
    conn: &mut sqlx::PgConnection,
    target: &Target,
    create_standin: bool,
) -> Result<(), Failure> {
    if schema::relation_exists(conn, "knowledge_spaces")
        .await
        .map_err(store_error)?
    {
        return Ok(());
    }
    if !create_standin {
        return Err(Failure::Refused(format!(
            "the database at {target} has no platform tables (knowledge_spaces): pass \
             --create-standin to create the stand-in tables on a rehearsal database"
        )));
    }
    schema::apply_unit(conn, &schema::PLATFORM_STANDIN).await?;
    Ok(())
}

/// `fixture`: the scale fixture on an empty rehearsal database.
pub(super) async fn fixture(args: &FixtureArgs) -> Result<ExitCode, Failure> {
    let target = args.connect.target()?;
    let mut conn = target.connect().await?;
    platform_tables(&mut conn, &target, args.create_standin).await?;
    let spaces: i64 = crate::store::sql::query_scalar("SELECT count(*) FROM knowledge_spaces")
        .fetch_one(&mut conn)
        .await
        .map_err(store_error)?;
    let ledger = schema::ledger_size(&mut conn).await.map_err(store_error)?;
    if spaces > 0 || ledger > 0 {
        return Err(Failure::Refused(format!(
            "the database at {target} already holds {spaces} spaces and {ledger} bootstraps: \
             the fixture is built on an empty rehearsal database"
        )));
    }
    let config = args.config();
    outln!(
        "building {} spaces over {} tenants with {} items each on {target}…",
        config.spaces,
        config.tenants,
        config.items_per_space
    );
    let report = fixture::build(&mut conn, &config, |step, took| {
        outln!("  {step} ({:.1} s)", took.as_secs_f64());
    })
    .await?;
    outln!(
        "built {} spaces with {} items and {} mutation leases in {:.0} s; the database takes {:.1} GB",
        report.spaces,
        report.items,
        report.leases,
        report.took.as_secs_f64(),
        report.database_bytes as f64 / 1e9
    );
    Ok(ExitCode::SUCCESS)
}

/// The demo opens the live console on a terminal that can draw it, and prints text summaries
/// otherwise (a pipe, `TERM=dumb`).
fn interactive(args: &RolloutArgs) -> bool {
    use std::io::IsTerminal;
    let term = std::env::var("TERM").ok();
    !args.text
        && crate::tui::terminal::term_can_draw(term.as_deref())
        && std::io::stdout().is_terminal()
        && std::io::stdin().is_terminal()
}

fn store_error(e: sqlx::Error) -> Failure {
    Failure::Store(e.into())
}

fn print_seed_report(report: &SeedReport) {
    let orphans = report.writers.iter().filter(|w| w.orphaned).count();
    outln!(
        "seeded {} spaces with {} documents ({} already migrated); migration 0009 created {} \
         bootstrap markers; {} document writers hold leases ({} of them orphaned)",
        report.spaces,
        report.documents,
        report.migrated_spaces,
        report.markers,
        report.writers.len(),
        orphans
    );
}

/// Prints a one-line summary every `every` seconds until a stop signal (or `duration`).
async fn watch_text(
    session: &Session,
    simulation: &Simulation,
    every: u64,
    duration: Option<Duration>,
    label: &str,
    signals: &mut StopSignals,
    thresholds: Thresholds,
) -> Result<Option<&'static str>, Failure> {
    let period = Duration::from_secs(every.max(1));
    let mut sync = session.ledger_sync(SyncSettings::default());
    let mut fleet = Fleet::new(thresholds);
    let mut ticker = tokio::time::interval(period);
    let deadline = duration.map(|d| tokio::time::Instant::now() + d);
    // The log tells a text report's life as it tells the live console's.
    tracing::info!(
        "text report started: version {}, {}, every {}s",
        env!("CARGO_PKG_VERSION"),
        session.topology().primary().host(),
        period.as_secs()
    );
    loop {
        let until_deadline = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let ended = tokio::select! {
            signal = signals.wait() => Some(Some(signal)),
            _ = until_deadline => Some(None),
            _ = ticker.tick() => None,
        };
        if let Some(signal) = ended {
            tracing::info!(
                "text report ended: {}",
                signal.unwrap_or("its duration passed")
            );
            return Ok(signal);
        }
        if simulation.every_worker_failing() {
            let last = simulation.stats().last_error().unwrap_or_default();
            return Err(Failure::Simulation(format!(
                "every simulated worker keeps failing on the database ({} errors); the last: {}",
                Stats::get(&simulation.stats().worker_errors),
                crate::domain::text::clean(&last, 300)
            )));
        }
        match session.reads().sync(&mut sync, period).await {
            Ok(changes) => {
                fleet.apply(changes);
                outln!("{}", summary_line(label, &fleet, simulation.stats()));
            }
            Err(e) => {
                let said = crate::domain::text::clean(&e.to_string(), 400);
                tracing::warn!("poll failed: {said}");
                outln!("{label} poll failed: {said}");
            }
        }
    }
}

fn summary_line(label: &str, fleet: &Fleet, stats: &Stats) -> String {
    let s = fleet.summary();
    let rate = s
        .documents_per_minute
        .map_or("-".to_string(), |r| format!("{r:.0}"));
    let eta = s.eta.map_or("-".to_string(), |d| {
        format!("{}m{:02}s", d.num_minutes(), d.num_seconds() % 60)
    });
    format!(
        "{label} {} | readable {}/{} ({:.0}%) | {} | docs/min {rate} ETA {eta} for {} running | \
         crashes {} fenced-out {} | errors workers {} writers {}{}",
        fleet
            .now()
            .map_or("--:--:--".into(), |t| t.format("%H:%M:%S").to_string()),
        s.readable,
        s.spaces,
        s.readable_share() * 100.0,
        crate::domain::board::attention_sentence(&s.by_attention),
        s.running_captured(),
        Stats::get(&stats.worker_crashes),
        Stats::get(&stats.fenced_out),
        Stats::get(&stats.worker_errors),
        Stats::get(&stats.writer_errors),
        stats
            .last_error()
            .map(|e| format!(" (last: {})", crate::domain::text::clean(&e, 160)))
            .unwrap_or_default(),
    )
}
