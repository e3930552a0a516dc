//! `retry`, `cancel` and `lease remove`: the domain's actions for runbooks and scripts. Each
//! checks its input before connecting, shows its plan (with what it rests on and what moved
//! meanwhile), asks for confirmation on a terminal (`--yes` skips it), honours `--dry-run`,
//! acts one space at a time within a deadline and reports every outcome with a summary line.
//! Every run prints its request id; `--request-id` re-drives it without applying anything
//! twice.

use std::io::{BufRead, IsTerminal, Read};
use std::process::ExitCode;
use std::time::Duration;

use uuid::Uuid;

use super::args::{self, ActionArgs, ConfirmArgs, LeaseRemoveArgs};
use super::{Failure, exit, outln, scope};
use crate::domain::actions::{
    self, Action, BootstrapKind, Confirmation, Kind, Plan, Planned, Refusal, RequestId,
    SeenBootstrap, Tally,
};
use crate::domain::ids::{IdArg, IdNames, parse_id_arg};
use crate::domain::report::Rows;
use crate::domain::session::{Session, SessionOptions};
use crate::domain::text;
use crate::store::read::IdTable;
use crate::topology::OpenError;

/// An id argument, checked before anything is connected: a whole UUID or its first hex digits.
fn parse_id(text: &str, what: &str) -> Result<IdArg, Failure> {
    parse_id_arg(text).map_err(|why| {
        Failure::Usage(format!(
            "{:?} is not a {what} id: {why} (a UUID such as 1f0c…-…, or its first digits)",
            text::clip(text, 60)
        ))
    })
}

/// The one id an argument names in `table`: a whole id as given, a prefix through the
/// primary key — refused, listing candidates, when it names several.
async fn resolve_id(
    session: &Session,
    arg: &IdArg,
    table: IdTable,
    what: &str,
) -> Result<Option<Uuid>, Failure> {
    if let IdArg::Whole(id) = arg {
        return Ok(Some(*id));
    }
    let digits = arg.typed();
    match session.reads().id_named(table, arg).await? {
        Ok(found) => Ok(found),
        Err(candidates) => {
            let shown: Vec<String> = candidates.iter().take(5).map(Uuid::to_string).collect();
            let more = if candidates.len() > 5 { ", …" } else { "" };
            Err(Failure::Usage(format!(
                "{digits} names more than one {what} id ({}{more}): give more digits",
                shown.join(", ")
            )))
        }
    }
}

/// " in tenant acme" under a tenant scope: where an id was looked for.
fn in_scope(session: &Session) -> String {
    session.tenant_scope().map_or(String::new(), |tenant| {
        format!(" in tenant {}", text::clean(tenant, 64))
    })
}

/// The reason, read and checked before anything is planned (a dry run included).
struct Reason {
    text: String,
    /// Read from standard input, so a confirmation must come from the terminal itself.
    from_stdin: bool,
}

fn reason(flags: &ConfirmArgs) -> Result<Reason, Failure> {
    let (text, from_stdin) = match (&flags.reason, &flags.reason_file) {
        (Some(reason), _) => (reason.clone(), false),
        (None, Some(path)) if path.as_os_str() == "-" => (
            read_reason(std::io::stdin().lock(), "standard input")?,
            true,
        ),
        (None, Some(path)) => {
            let shown = text::clean(&path.display().to_string(), 120);
            let file = std::fs::File::open(path).map_err(|e| {
                Failure::Usage(format!("could not read the reason from {shown}: {e}"))
            })?;
            (read_reason(file, &shown)?, false)
        }
        // clap requires one of the two.
        (None, None) => (String::new(), false),
    };
    match actions::check_reason(&text) {
        Ok(checked) => Ok(Reason {
            text: checked.into_owned(),
            from_stdin,
        }),
        Err(Refusal::MissingReason) => Err(Failure::Usage(
            "the reason must say why; it goes into the audit log".into(),
        )),
        Err(refusal) => Err(Failure::Usage(refusal.to_string())),
    }
}

/// The most a reason can take in UTF-8: a longer file is refused without being read further
/// (`/dev/zero` would never end).
const REASON_BYTES: u64 = actions::MAX_REASON_CHARS as u64 * 4;

/// A reason from `source`, read up to one byte past the longest reason there can be.
fn read_reason(source: impl std::io::Read, from: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    source
        .take(REASON_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(format!("could not read the reason from {from}: {e}")))?;
    if bytes.len() as u64 > REASON_BYTES {
        return Err(Failure::Usage(format!(
            "the reason in {from} is longer than {REASON_BYTES} bytes: a reason is at most {} \
             characters",
            actions::MAX_REASON_CHARS
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| Failure::Usage(format!("the reason in {from} is not UTF-8 text")))
}

/// Everything a command checks before it connects.
struct Checked {
    reason: Reason,
    request: RequestId,
    deadline: Duration,
}

fn check_flags(flags: &ConfirmArgs) -> Result<Checked, Failure> {
    Ok(Checked {
        deadline: args::deadline(flags.apply_deadline_secs).map_err(Failure::Usage)?,
        request: flags
            .request_id
            .map_or_else(RequestId::new, RequestId::from_uuid),
        reason: reason(flags)?,
    })
}

pub(super) async fn bootstrap_action(
    args: &ActionArgs,
    kind: BootstrapKind,
) -> Result<ExitCode, Failure> {
    let verb = kind.verb();
    let ids = args
        .ids
        .iter()
        .map(|id| parse_id(id, "space or bootstrap"))
        .collect::<Result<Vec<_>, _>>()?;
    if ids.is_empty() && !args.filter.selects() {
        return Err(Failure::Usage(format!(
            "name the spaces to {verb}, or select them with --state, --checkpoint or --attention"
        )));
    }
    if !ids.is_empty() && args.filter.selects() {
        return Err(Failure::Usage("give space ids or filters, not both".into()));
    }
    if args.row_version.is_some() && ids.len() != 1 {
        return Err(Failure::Usage("--row-version needs exactly one id".into()));
    }
    if args.confirm.request_id.is_some() && ids.is_empty() {
        return Err(Failure::Usage(
            "--request-id re-drives the spaces of an earlier run: name them by id (a filter \
             would select other spaces now)"
                .into(),
        ));
    }
    let checked = check_flags(&args.confirm)?;
    let thresholds = args
        .filter
        .thresholds
        .thresholds()
        .map_err(Failure::Usage)?;

    let target = args.connect.target()?;
    let session = super::open_session(
        &target,
        SessionOptions {
            tenant: args.filter.tenant.clone(),
            read_only: false,
            thresholds,
            primary: args.confirm.primary.clone(),
        },
    )
    .await?;
    let result = bootstrap_action_on(&session, args, &ids, kind, &checked).await;
    session.close().await;
    result
}

/// What would stop every action, said before anything is planned: the console's schema
/// missing or outdated (exit 5), or grants this role lacks (exit 8).
fn require_writable(session: &Session, kind: Kind) -> Result<(), Failure> {
    let topology = session.topology();
    let capabilities = topology.capabilities();
    actions::audit_ready(capabilities).map_err(|r| Failure::ConsoleSchema(r.to_string()))?;
    if capabilities.in_recovery {
        return Err(Failure::Refused(format!(
            "the database at {} is a standby (in recovery), which cannot be written: actions \
             go to the primary — name it with --database-url (several hosts may be listed; the \
             primary among them is used)",
            session.topology().primary().host()
        )));
    }
    // Only the grants this action needs: a role may be allowed some actions and not others.
    let missing = capabilities.missing_grants_for(kind.writes());
    if missing.is_empty() {
        return Ok(());
    }
    Err(Failure::Open(OpenError::MissingPrivilege {
        role: capabilities.current_user.clone(),
        missing,
    }))
}

async fn bootstrap_action_on(
    session: &Session,
    args: &ActionArgs,
    ids: &[IdArg],
    kind: BootstrapKind,
    checked: &Checked,
) -> Result<ExitCode, Failure> {
    require_writable(session, kind.kind())?;
    scope::require_known_tenant(session).await?;
    let make = |seen, request| kind.action(seen, request);
    let mut unknown = Vec::new();
    let mut to_plan = Vec::new();
    if ids.is_empty() {
        let now = session.reads().database_now().await?;
        let filter = args.filter.report_filter();
        let mut rows =
            Rows::new(session, now, &filter, session.thresholds()).page_size(args.limit as i64 + 1);
        // One more than the limit is enough to say the filter selects too many.
        while to_plan.len() <= args.limit
            && let Some(page) = rows.next_page().await?
        {
            for row in page.iter().take(args.limit + 1 - to_plan.len()) {
                to_plan.push(make(SeenBootstrap::from(row), checked.request));
            }
        }
    } else {
        for (text, arg) in args.ids.iter().zip(ids) {
            let id = match resolve_id(session, arg, IdTable::Bootstraps, "bootstrap").await? {
                Some(id) => id,
                None => {
                    outln!(
                        "{}: refused — no bootstrap or space id{} {} it",
                        text::clean(text, 60),
                        in_scope(session),
                        arg.how_it_names()
                    );
                    return Ok(ExitCode::from(exit::REFUSED));
                }
            };
            match session.reads().find_bootstrap(id).await? {
                Some(b) => {
                    let action = make(SeenBootstrap::from(&b), checked.request);
                    to_plan.push(match args.row_version {
                        Some(version) => action.with_exact_row_version(version),
                        None => action,
                    });
                }
                None => unknown.push(id),
            }
        }
    }
    if to_plan.len() > args.limit {
        return Err(Failure::Usage(format!(
            "more than {limit} spaces match (--limit {limit}): narrow the filter or raise \
             --limit",
            limit = args.limit
        )));
    }
    // Every id printed from here on is told apart from the others in scope.
    let shown: Vec<Uuid> = to_plan.iter().flat_map(Action::shown_ids).collect();
    let session = &session.with_names(session.reads().names_around(&shown).await?);
    for id in &unknown {
        outln!("{id}: refused — no bootstrap or space has this id");
    }
    if to_plan.is_empty() {
        outln!("no space to {}", kind.verb());
        return Ok(ExitCode::from(if unknown.is_empty() {
            exit::DONE
        } else {
            exit::REFUSED
        }));
    }
    let (plans, doubt) = plan_request(session, &to_plan, args.confirm.dry_run).await?;
    let mut run = Run::new(unknown.len());
    run.doubt = doubt;
    run.act(session, plans, &args.confirm, checked).await
}

pub(super) async fn remove_lease(args: &LeaseRemoveArgs) -> Result<ExitCode, Failure> {
    let arg = parse_id(&args.lease_id, "lease")?;
    let checked = check_flags(&args.confirm)?;
    let thresholds = args.thresholds.thresholds().map_err(Failure::Usage)?;
    let target = args.connect.target()?;
    let session = super::open_session(
        &target,
        SessionOptions {
            tenant: args.tenant.clone(),
            read_only: false,
            thresholds,
            primary: args.confirm.primary.clone(),
        },
    )
    .await?;
    let result = match resolve_id(&session, &arg, IdTable::Leases, "lease").await {
        Ok(Some(id)) => remove_lease_on(&session, args, id, &checked).await,
        Ok(None) => {
            outln!(
                "lease {}: refused — no lease id{} {} it (already gone?)",
                text::clean(&args.lease_id, 60),
                in_scope(&session),
                arg.how_it_names()
            );
            Ok(ExitCode::from(exit::REFUSED))
        }
        Err(failure) => Err(failure),
    };
    session.close().await;
    result
}

async fn remove_lease_on(
    session: &Session,
    args: &LeaseRemoveArgs,
    id: Uuid,
    checked: &Checked,
) -> Result<ExitCode, Failure> {
    require_writable(session, Kind::RemoveLease)?;
    scope::require_known_tenant(session).await?;
    let lease = session.reads().find_lease(id).await?;
    let shown = lease
        .as_ref()
        .map_or(vec![id], |l| vec![l.id, l.knowledge_space_id]);
    let names = session.reads().names_around(&shown).await?;
    let session = &session.with_names(names.clone());
    let Some(lease) = lease else {
        // A re-driven removal finds its lease gone: its own doing, if the audit says so.
        let done = actions::applied_before(session, Kind::RemoveLease, checked.request, id);
        if let Some(audit_id) = done.await? {
            outln!("request {}", checked.request);
            outln!(
                "lease {}: remove lease already applied (audit record {audit_id})",
                names.short(&id)
            );
            return Ok(ExitCode::from(exit::DONE));
        }
        outln!("lease {id}: refused — no such lease (already gone?)");
        return Ok(ExitCode::from(exit::REFUSED));
    };
    let action = Action::remove_lease(lease.identity(), args.force, checked.request);
    let (plans, doubt) = plan_request(session, &[action], args.confirm.dry_run).await?;
    let mut run = Run::new(0);
    run.doubt = doubt;
    run.act(session, plans, &args.confirm, checked).await
}

/// Plans a request. A dry run writes nothing, so it goes on past the split-brain guard's
/// refusal (an unknown outcome can still be settled) and says the refusal with its plans.
async fn plan_request(
    session: &Session,
    to_plan: &[Action],
    dry_run: bool,
) -> Result<(Planned, Option<String>), Failure> {
    match actions::plan_all(session, to_plan).await {
        Err(actions::ActionError::PrimaryInDoubt(doubt)) if dry_run => Ok((
            actions::plan_each(session, to_plan).await?,
            Some(doubt.to_string()),
        )),
        planned => Ok((planned?, None)),
    }
}

/// The tally of one command's actions: what the plans refused, then what applying did.
struct Run {
    tally: Tally,
    /// The split-brain guard refused a dry run's primary (said, and exit 10).
    doubt: Option<String>,
}

impl Run {
    fn new(already_refused: usize) -> Self {
        Self {
            tally: Tally {
                refused: already_refused,
                ..Tally::default()
            },
            doubt: None,
        }
    }

    fn exit_code(&self) -> ExitCode {
        let tally = &self.tally;
        // An unknown outcome first: the guard's refusal of the rest does not settle it.
        ExitCode::from(if !tally.unknown.is_empty() {
            exit::OUTCOME_UNKNOWN
        } else if tally.primary_in_doubt {
            exit::PRIMARY_IN_DOUBT
        } else if tally.failed > 0 {
            exit::UNREACHABLE
        } else if tally.refused > 0 {
            exit::REFUSED
        } else {
            exit::DONE
        })
    }

    async fn act(
        &mut self,
        session: &Session,
        planned: Planned,
        flags: &ConfirmArgs,
        checked: &Checked,
    ) -> Result<ExitCode, Failure> {
        outln!("request {}", checked.request);
        self.show(&planned.plans, &session.names());
        // A re-driven request's actions applied before are done: said once, never re-applied.
        let done: Vec<&Plan> = planned
            .plans
            .iter()
            .filter(|p| p.applied_before.is_some())
            .collect();
        let applicable = planned.to_apply();
        let already = if done.is_empty() {
            String::new()
        } else {
            format!(", {} already applied", done.len())
        };
        if flags.dry_run {
            let pending = self.still_pending(session, &applicable, checked).await?;
            if let Some(doubt) = &self.doubt {
                outln!(
                    "dry run: nothing would be applied — {}",
                    text::clean(doubt, 1000)
                );
                self.tally.primary_in_doubt = true;
            }
            outln!(
                "dry run: {} would be applied{already}, {} refused{}; nothing was written",
                applicable.len() - pending,
                self.tally.refused,
                if pending > 0 {
                    format!(", {pending} unknown")
                } else {
                    String::new()
                }
            );
            return Ok(self.exit_code());
        }
        if applicable.is_empty() {
            outln!("0 applied{already}, {} refused", self.tally.refused);
            // Nothing left to do is done when it was all applied before; otherwise refused.
            if done.is_empty() {
                self.tally.refused = self.tally.refused.max(1);
            }
            return Ok(self.exit_code());
        }
        // Only new work needs a confirmation.
        if !flags.yes {
            let verb = applicable[0].action.kind().verb();
            let confirmation = planned.confirmation(&session.names());
            confirmed(&confirmation, verb, &checked.reason).await?;
        }
        let to_apply: Vec<Action> = applicable.iter().map(|p| p.action.clone()).collect();
        let reason = &checked.reason.text;
        let applied = actions::apply_each(
            session,
            &to_apply,
            reason,
            checked.deadline,
            None,
            |_, _, line| outln!("{}", text::clean(&line, 1000)),
        )
        .await;
        let tally = &mut self.tally;
        tally.applied += applied.applied;
        tally.refused += applied.refused;
        tally.failed += applied.failed;
        tally.unknown.extend(applied.unknown);
        tally.chain_head = applied.chain_head;
        tally.primary_in_doubt = applied.primary_in_doubt;
        if let Some(forced) = &applied.forced {
            super::say(&format!("bootstrap-console: {}", text::clean(forced, 1000)));
        }
        let tally = &self.tally;
        outln!(
            "{} applied{already}, {} refused{}{}",
            tally.applied,
            tally.refused,
            if tally.failed > 0 {
                format!(", {} failed", tally.failed)
            } else {
                String::new()
            },
            self.unknown_advice(
                checked.request,
                &checked.reason.text,
                session.tenant_scope()
            )
        );
        if let Some(head) = &self.tally.chain_head {
            outln!("audit chain head: {head}");
        }
        Ok(self.exit_code())
    }

    /// A re-driven request's dry run asks more than the plan: an earlier run of it may still
    /// hold its row and commit. Each action that would apply is looked up under the row lock;
    /// those whose row is still held are said to be unknown. Returns how many.
    async fn still_pending(
        &mut self,
        session: &Session,
        applicable: &[&Plan],
        checked: &Checked,
    ) -> Result<usize, Failure> {
        if checked.request.is_fresh() {
            return Ok(0);
        }
        let mut pending = 0;
        for plan in applicable.iter().filter(|p| p.applied_before.is_none()) {
            let found = actions::resolve(session, &plan.action, None).await?;
            if found == actions::Lookup::RowLocked {
                outln!(
                    "{}: outcome still unknown — another transaction holds the row (an earlier \
                     run of request {} may still commit)",
                    plan.action.target(&session.names()),
                    checked.request
                );
                self.tally.unknown.push(plan.action.clone());
                pending += 1;
            }
        }
        Ok(pending)
    }

    /// How to learn what became of the actions whose outcome is unknown: the same request
    /// again, naming exactly their subjects.
    fn unknown_advice(&self, request: RequestId, reason: &str, tenant: Option<&str>) -> String {
        if self.tally.unknown.is_empty() {
            return String::new();
        }
        format!(
            ", {} unknown — `{}` (with the same connection) tells what became of them; without \
             --dry-run it finishes the request, applying nothing twice",
            self.tally.unknown.len(),
            actions::settle_command(&self.tally.unknown, request, reason, tenant)
        )
    }

    /// Prints every plan, counting the refused ones.
    fn show(&mut self, plans: &[Plan], names: &IdNames) {
        // One line per space for bulk actions; the whole plan for a single one.
        let detailed = plans.len() == 1;
        for plan in plans {
            let target = plan.action.target(names);
            let verb = plan.action.kind().verb();
            if let Some(audit_id) = plan.applied_before {
                outln!("{target}: {verb} already applied (audit record {audit_id})");
                continue;
            }
            match &plan.verdict {
                Ok(changes) if detailed => {
                    for line in &plan.evidence {
                        outln!("{target}: {}", text::clean(line, 200));
                    }
                    if let Some(meanwhile) = &plan.meanwhile {
                        outln!("{target}: {}", text::clean(meanwhile, 200));
                    }
                    outln!("{target}: {verb} will change:");
                    for change in changes {
                        outln!("  {}", text::clean(&change.to_string(), 200));
                    }
                }
                Ok(changes) => {
                    let first = changes.first().map(|c| c.to_string()).unwrap_or_default();
                    outln!("{target}: {verb}: {}", text::clean(&first, 120));
                }
                Err(refusal) => {
                    self.tally.refused += 1;
                    if detailed {
                        for line in &plan.evidence {
                            outln!("{target}: {}", text::clean(line, 200));
                        }
                    }
                    outln!(
                        "{target}: refused — {}",
                        text::clean(&refusal.to_string(), 300)
                    );
                }
            }
        }
    }
}

/// Asks on the terminal: standard input, or the terminal itself when the reason came through
/// standard input. Without one, `--yes` is required.
async fn confirmed(confirm: &Confirmation, verb: &str, reason: &Reason) -> Result<(), Failure> {
    let no_terminal = || {
        Failure::Usage(
            "there is no terminal to confirm on: pass --yes to apply without a question".into(),
        )
    };
    let prompt = confirm.prompt(verb);
    let from_tty = reason.from_stdin;
    if !from_tty && !std::io::stdin().is_terminal() {
        return Err(no_terminal());
    }
    let answer = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        let mut line = String::new();
        if from_tty {
            use std::io::Write;
            let tty = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")?;
            (&tty).write_all(prompt.as_bytes())?;
            std::io::BufReader::new(tty).read_line(&mut line)?;
        } else {
            super::emit(&prompt);
            std::io::stdin().lock().read_line(&mut line)?;
        }
        Ok(line)
    })
    .await
    .map_err(|e| Failure::Io(std::io::Error::other(e)))?
    .map_err(|_| no_terminal())?;
    if confirm.accepts(&answer) {
        Ok(())
    } else {
        Err(Failure::Refused(
            "not confirmed; nothing was written".to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::actions::settle::shell_word;

    #[test]
    fn shell_words_read_back_unchanged_or_are_placeholders() {
        assert_eq!(shell_word("acme-eu", "x"), "acme-eu");
        assert_eq!(shell_word("stop it", "x"), "'stop it'");
        assert_eq!(shell_word("it's $HOME", "x"), "'it'\\''s $HOME'");
        assert_eq!(
            shell_word("line\nbreak", "the same reason"),
            "'<the same reason>'"
        );
        assert_eq!(shell_word("", "x"), "''");
    }
}
