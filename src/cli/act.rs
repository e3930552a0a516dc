//! `retry`, `cancel` and `lease remove`: the domain's actions for runbooks and scripts. Each
//! shows its plan, asks for confirmation on a terminal (`--yes` skips it), honours `--dry-run`,
//! acts one space at a time and reports every outcome with a summary line.

use super::outln;
use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use uuid::Uuid;

use super::Failure;
use super::args::{ActionArgs, ConfirmArgs, LeaseRemoveArgs};
use crate::domain::actions::{self, Action, Kind, Outcome, Plan};
use crate::domain::model::short_id;
use crate::domain::report::Rows;
use crate::domain::session::{Session, SessionOptions};
use crate::domain::text;

const REFUSED: u8 = 3;

fn parse_id(text: &str, what: &str) -> Result<Uuid, Failure> {
    Uuid::parse_str(text.trim()).map_err(|_| {
        Failure::Usage(format!(
            "{:?} is not a {what} id (expected a UUID such as 1f0c…-…)",
            text::clip(text, 60)
        ))
    })
}

fn check_reason(reason: &str) -> Result<(), Failure> {
    if reason.trim().is_empty() {
        return Err(Failure::Usage(
            "--reason must say why; it goes into the audit log".into(),
        ));
    }
    Ok(())
}

pub(super) async fn bootstrap_action(args: &ActionArgs, kind: Kind) -> Result<ExitCode, Failure> {
    let name = kind.name();
    let ids = args
        .ids
        .iter()
        .map(|id| parse_id(id, "space or bootstrap"))
        .collect::<Result<Vec<_>, _>>()?;
    if ids.is_empty() && !args.filter.selects() {
        return Err(Failure::Usage(format!(
            "name the spaces to {name}, or select them with --state, --checkpoint or --attention"
        )));
    }
    if !ids.is_empty() && args.filter.selects() {
        return Err(Failure::Usage("give space ids or filters, not both".into()));
    }
    if args.row_version.is_some() && ids.len() != 1 {
        return Err(Failure::Usage("--row-version needs exactly one id".into()));
    }
    check_reason(&args.confirm.reason)?;

    let target = args.connect.target()?;
    let session = Session::open(
        &target,
        SessionOptions {
            tenant: args.filter.tenant.clone(),
            read_only: false,
        },
    )
    .await?;

    let mut unknown = Vec::new();
    let mut actions_to_plan = Vec::new();
    if ids.is_empty() {
        let thresholds = args
            .filter
            .thresholds
            .thresholds()
            .map_err(Failure::Usage)?;
        let now = session.database_now().await?;
        let filter = args.filter.report_filter();
        let mut rows =
            Rows::new(&session, now, &filter, &thresholds).page_size(args.limit as i64 + 1);
        // One more than the limit is enough to say the filter selects too many.
        while actions_to_plan.len() <= args.limit
            && let Some(page) = rows.next_page().await?
        {
            for row in page.iter().take(args.limit + 1 - actions_to_plan.len()) {
                actions_to_plan.push(kind.action(row.id, row.row_version));
            }
        }
    } else {
        for id in &ids {
            match session.find_bootstrap(*id).await? {
                Some(b) => actions_to_plan
                    .push(kind.action(b.id, args.row_version.unwrap_or(b.row_version))),
                None => unknown.push(*id),
            }
        }
    }
    if actions_to_plan.len() > args.limit {
        return Err(Failure::Usage(format!(
            "more than {limit} spaces match (--limit {limit}): narrow the filter or raise \
             --limit",
            limit = args.limit
        )));
    }
    for id in &unknown {
        outln!("{id}: refused — no bootstrap or space has this id");
    }
    if actions_to_plan.is_empty() {
        outln!("no space to {name}");
        return Ok(if unknown.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(REFUSED)
        });
    }
    let plans = plan_all(&session, &actions_to_plan).await?;
    let confirm = Confirmation::Count(plans.iter().filter(|p| p.verdict.is_ok()).count());
    run(&session, plans, unknown.len(), &args.confirm, name, confirm).await
}

pub(super) async fn remove_lease(args: &LeaseRemoveArgs) -> Result<ExitCode, Failure> {
    let id = parse_id(&args.lease_id, "lease")?;
    check_reason(&args.confirm.reason)?;
    let target = args.connect.target()?;
    let session = Session::open(
        &target,
        SessionOptions {
            tenant: args.tenant.clone(),
            read_only: false,
        },
    )
    .await?;
    let Some(lease) = session.find_lease(id).await? else {
        outln!("lease {id}: refused — no such lease (already gone?)");
        return Ok(ExitCode::from(REFUSED));
    };
    let action = Action::RemoveLease {
        seen: lease.identity(),
        force: args.force,
    };
    let plans = plan_all(&session, &[action]).await?;
    let confirm = Confirmation::Code(short_id(&id));
    run(&session, plans, 0, &args.confirm, "remove lease", confirm).await
}

async fn plan_all(session: &Session, actions: &[Action]) -> Result<Vec<Plan>, Failure> {
    let mut plans = Vec::with_capacity(actions.len());
    for action in actions {
        plans.push(actions::plan(session, action).await?);
    }
    Ok(plans)
}

/// What the operator types to confirm on a terminal.
enum Confirmation {
    /// `yes` for one space, the number of spaces for several.
    Count(usize),
    /// The first 8 characters of a lease id.
    Code(String),
}

fn target_of(plan: &Plan) -> String {
    match (&plan.action, plan.knowledge_space_id, &plan.tenant_id) {
        (Action::RemoveLease { seen, .. }, _, _) => format!("lease {}", short_id(&seen.id)),
        (_, Some(space), Some(tenant)) => {
            format!(
                "space {} (tenant {})",
                short_id(&space),
                text::clean(tenant, 40)
            )
        }
        (Action::Retry { bootstrap_id, .. } | Action::Cancel { bootstrap_id, .. }, _, _) => {
            format!("bootstrap {}", short_id(bootstrap_id))
        }
    }
}

async fn run(
    session: &Session,
    plans: Vec<Plan>,
    unknown: usize,
    flags: &ConfirmArgs,
    name: &str,
    confirm: Confirmation,
) -> Result<ExitCode, Failure> {
    let mut refused = unknown;
    let mut applicable = Vec::new();
    // One line per space for bulk actions; every change for a single one.
    let detailed = plans.len() == 1;
    for plan in &plans {
        match &plan.verdict {
            Ok(changes) if detailed => {
                outln!("{}: {name} will change:", target_of(plan));
                for change in changes {
                    outln!("  {}", text::clean(&change.to_string(), 200));
                }
                applicable.push(plan);
            }
            Ok(changes) => {
                let first = changes.first().map(|c| c.to_string()).unwrap_or_default();
                outln!("{}: {name}: {}", target_of(plan), text::clean(&first, 120));
                applicable.push(plan);
            }
            Err(refusal) => {
                refused += 1;
                outln!(
                    "{}: refused — {}",
                    target_of(plan),
                    text::clean(&refusal.to_string(), 300)
                );
            }
        }
    }
    if flags.dry_run {
        outln!(
            "dry run: {} would be applied, {refused} refused; nothing was written",
            applicable.len()
        );
        return Ok(exit_for(refused));
    }
    if applicable.is_empty() {
        outln!("0 applied, {refused} refused");
        return Ok(exit_for(refused.max(1)));
    }
    if !flags.yes {
        confirmed(&confirm, name, applicable.len()).await?;
    }
    let mut applied = 0;
    for plan in applicable {
        let target = target_of(plan);
        match actions::apply(session, &plan.action, &flags.reason).await {
            Ok(Outcome::Applied(done)) => {
                applied += 1;
                outln!("{target}: {name} applied (audit record {})", done.audit_id);
            }
            Ok(Outcome::Refused(refusal)) => {
                refused += 1;
                outln!(
                    "{target}: refused — {}",
                    text::clean(&refusal.to_string(), 300)
                );
            }
            Err(e) => {
                refused += 1;
                outln!("{target}: failed — {}", text::clean(&e.to_string(), 300));
            }
        }
    }
    outln!("{applied} applied, {refused} refused");
    Ok(exit_for(refused))
}

fn exit_for(refused: usize) -> ExitCode {
    if refused == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(REFUSED)
    }
}

/// Asks on the terminal; without one, `--yes` is required.
async fn confirmed(confirm: &Confirmation, name: &str, count: usize) -> Result<(), Failure> {
    if !std::io::stdin().is_terminal() {
        return Err(Failure::Usage(
            "standard input is not a terminal, so nobody can confirm: pass --yes to apply".into(),
        ));
    }
    let (prompt, expected) = match confirm {
        Confirmation::Count(1) => (format!("type yes to {name}: "), "yes".to_string()),
        Confirmation::Count(n) => (
            format!("type the number of spaces ({n}) to {name} them: "),
            n.to_string(),
        ),
        Confirmation::Code(code) => (
            format!("type the lease id's first 8 characters ({code}) to confirm: "),
            code.clone(),
        ),
    };
    super::emit(&prompt);
    let answer = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| Failure::Io(std::io::Error::other(e)))??;
    if answer.trim() == expected {
        Ok(())
    } else {
        Err(Failure::Refused(format!(
            "not confirmed ({count} pending); nothing was written"
        )))
    }
}
