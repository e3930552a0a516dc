//! Ids people can tell apart: ids minted from a clock or a sequence share their first digits,
//! so each is shown by the shortest form no other id in scope shares — in `status`, in the
//! actions' outcome lines, on the board and in the lease confirmation — and may be typed back
//! in that form. The real binary against a real PostgreSQL; the console in a pseudo-terminal.

use crate::common;

use common::TestDb;
use common::cli::{on, stderr, stdout};
use common::fixture::{self, JobSpec};
use common::pty::Console;
use unicode_width::UnicodeWidthStr;
use uuid::Uuid;

fn uuid(text: &str) -> Uuid {
    Uuid::parse_str(text).expect("uuid")
}

/// Spaces whose ids share 31 digits (a sequence), 24 (one millisecond of UUIDv7) and 9, and
/// one unlike the others; each with the form it must be shown in.
const SPACES: [(&str, &str); 7] = [
    ("00000000-0000-0000-0000-000000000001", "..00000001"),
    ("00000000-0000-0000-0000-000000000002", "..00000002"),
    ("01a22fde-e61e-7000-8000-0000c2ce8091", "..c2ce8091"),
    ("01a22fde-e61e-7000-8000-0000d1f04a27", "..d1f04a27"),
    ("3f2a9c10-4a00-4000-8000-000000000000", "3f2a9c104a"),
    ("3f2a9c10-4b00-4000-8000-000000000000", "3f2a9c104b"),
    ("b7d1e2f3-0000-4000-8000-000000000000", "b7d1e2f3"),
];

/// A lease id from the same sequence as the first spaces.
const LEASE: (&str, &str) = ("00000000-0000-0000-0000-000000000041", "..00000041");

async fn fleet_of_alike_ids(db: &TestDb, run_state: &'static str) {
    for (id, _) in SPACES {
        let spec = JobSpec {
            id: Some(uuid(id)),
            ..JobSpec::new("acme", run_state)
        };
        fixture::job(&db.pool, &spec).await;
    }
}

#[tokio::test]
async fn status_and_outcome_lines_show_each_id_by_a_form_no_other_shares() {
    let db = TestDb::migrated().await;
    fleet_of_alike_ids(&db, "failed").await;

    let status = on(&db, &["status"]);
    let text = stdout(&status);
    let mut starts = Vec::new();
    for (id, shown) in SPACES {
        let line = text
            .lines()
            .find(|line| line.contains(&format!(" {shown} ")))
            .unwrap_or_else(|| panic!("{id} shown as {shown}:\n{text}"));
        starts.push(line.find(shown).map(|at| line[..at].width()));
        assert!(line.width() <= 80, "within 80 columns: {line}");
    }
    assert!(
        starts.windows(2).all(|w| w[0] == w[1]),
        "one space column: {starts:?}\n{text}"
    );
    let header = text.lines().next().expect("a header");
    assert_eq!(
        header.find("SPACE").map(|at| header[..at].width()),
        starts[0]
    );

    // The shown forms are typed back: a marked suffix, a longer prefix.
    for (typed, shown) in [(SPACES[1].1, SPACES[1].1), ("3F2A9C10-4B", SPACES[5].1)] {
        let retried = on(&db, &["retry", typed, "--reason", "parser fixed", "--yes"]);
        assert_eq!(retried.status.code(), Some(0), "{}", stderr(&retried));
        assert!(
            stdout(&retried).contains(&format!("space {shown}: retry applied")),
            "{}",
            stdout(&retried)
        );
    }
    // A form some other id shares names nothing for sure.
    let ambiguous = on(&db, &["retry", "01a22fde", "--reason", "x", "--yes"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(stderr(&ambiguous).contains("names more than one bootstrap id"));
    let none = on(&db, &["retry", "..99999999", "--reason", "x", "--yes"]);
    assert_eq!(none.status.code(), Some(3), "{}", stdout(&none));
    assert!(
        stdout(&none).contains("no bootstrap or space id ends with it"),
        "{}",
        stdout(&none)
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 2);
}

/// `lease remove` of [`LEASE`] by its shown form, on a terminal (so it asks to confirm).
fn remove(url: &str) -> Console {
    Console::start(
        &[
            "lease",
            "remove",
            LEASE.1,
            "--reason",
            "writer pod is gone",
            "--database-url",
            url,
        ],
        &[],
        100,
        30,
    )
}

#[tokio::test]
async fn the_lease_confirmation_asks_for_the_form_that_tells_the_lease_apart() {
    let db = TestDb::migrated().await;
    fleet_of_alike_ids(&db, "queued").await;
    let space = uuid(SPACES[0].0);
    fixture::lease_with_id(&db.pool, uuid(LEASE.0), "acme", space, 7200).await;
    let url = db.url();
    let mut cli = remove(&url);
    let prompt = format!("type the lease id as shown ({}) to confirm", LEASE.1);
    let screen = cli.wait_for(&prompt, 20);
    assert!(
        screen.contains(&format!("blocks space {}", SPACES[0].1)),
        "{screen}"
    );
    // The first 8 digits are every id's here: they do not confirm.
    cli.send("00000000\r");
    let screen = cli.wait_for("not confirmed", 10);
    assert!(!screen.contains("applied ("), "{screen}");
    assert_eq!(cli.wait_exit(10), 3);
    assert_eq!(fixture::audit_count(&db.pool).await, 0);

    let mut cli = remove(&url);
    cli.wait_for(&prompt, 20);
    cli.send(&format!("{}\r", LEASE.1));
    let screen = cli.wait_for("1 applied", 20);
    assert!(
        screen.contains(&format!("lease {}: remove lease applied", LEASE.1)),
        "{screen}"
    );
    assert_eq!(cli.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_board_and_its_lease_dialog_tell_alike_ids_apart_at_80_columns() {
    let db = TestDb::migrated().await;
    fleet_of_alike_ids(&db, "queued").await;
    let space = uuid(SPACES[0].0);
    fixture::lease_with_id(&db.pool, uuid(LEASE.0), "acme", space, 7200).await;
    let url = db.url();
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 80, 24);
    console.wait_ready("READ-WRITE", 20);
    let board = console.wait_until("every space on the board", 20, |s| {
        SPACES.iter().all(|(_, shown)| s.contains(shown))
    });
    assert!(
        !board.contains("00000000 "),
        "no id reads as its shared prefix:\n{board}"
    );
    // The blocked space comes first and is selected: its lease is the one removed.
    console.send("x");
    let dialog = console.wait_for("remove mutation lease", 20);
    assert!(
        dialog.contains(&format!("remove mutation lease {}", LEASE.1)),
        "{dialog}"
    );
    console.wait_for(&format!("({})", LEASE.1), 20);
    console.send("writer pod is gone");
    console.send("\t");
    console.send(LEASE.1);
    console.send("\r");
    console.wait_for("remove lease applied", 20);
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
    console.send("\x1b");
    // The filter finds a space by the form it is shown in.
    console.send("/");
    console.send(SPACES[1].1);
    console.send("\r");
    let one = console.wait_until("one row", 10, |s| s.contains(" 1 of "));
    assert!(one.contains(SPACES[1].1), "{one}");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[tokio::test]
async fn under_a_tenant_scope_forms_are_told_apart_and_typed_back_within_the_scope() {
    let db = TestDb::migrated().await;
    fleet_of_alike_ids(&db, "failed").await;
    // Another tenant's space shares 10 digits with one of acme's.
    let other = uuid("3f2a9c10-4a11-4000-8000-000000000000");
    let spec = JobSpec {
        id: Some(other),
        ..JobSpec::new("globex", "failed")
    };
    fixture::job(&db.pool, &spec).await;

    // Fleet-wide the two need 11 digits; within acme, 10 tell acme's apart.
    let everyone = stdout(&on(&db, &["status"]));
    assert!(everyone.contains(" 3f2a9c104a0 "), "{everyone}");
    let acme = stdout(&on(&db, &["status", "--tenant", "acme"]));
    assert!(acme.contains(" 3f2a9c104a "), "{acme}");

    let retry = |args: &[&str]| {
        let mut all = vec!["retry", "--reason", "parser fixed", "--yes", "--dry-run"];
        all.extend(args);
        on(&db, &all)
    };
    let fleet_wide = retry(&["3f2a9c104a"]);
    assert_eq!(fleet_wide.status.code(), Some(2), "{}", stdout(&fleet_wide));
    let scoped = retry(&["3f2a9c104a", "--tenant", "acme"]);
    assert_eq!(scoped.status.code(), Some(0), "{}", stderr(&scoped));
    assert!(
        stdout(&scoped).contains("space 3f2a9c104a: retry"),
        "{}",
        stdout(&scoped)
    );
    // Candidates are listed from the scope only.
    let ambiguous = retry(&["3f2a9c10", "--tenant", "acme"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    let sentence = stderr(&ambiguous);
    assert!(
        sentence.contains(SPACES[4].0) && sentence.contains(SPACES[5].0),
        "{sentence}"
    );
    assert!(!sentence.contains(&other.to_string()), "{sentence}");
    let elsewhere = retry(&["3f2a9c104a1", "--tenant", "acme"]);
    assert_eq!(elsewhere.status.code(), Some(3));
    assert!(
        stdout(&elsewhere).contains("no bootstrap or space id in tenant acme starts with it"),
        "{}",
        stdout(&elsewhere)
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 0);
}

#[tokio::test]
async fn a_short_report_names_ids_from_their_neighbours_as_a_long_one_does() {
    let db = TestDb::migrated().await;
    // Only prefixes tell these apart: a short report asks the primary key for neighbours.
    for (id, _) in &SPACES[4..] {
        let spec = JobSpec {
            id: Some(uuid(id)),
            ..JobSpec::new("acme", "failed")
        };
        fixture::job(&db.pool, &spec).await;
    }
    let text = stdout(&on(&db, &["status", "--attention", "failed"]));
    for (_, shown) in &SPACES[4..] {
        assert!(text.contains(&format!(" {shown} ")), "{shown}:\n{text}");
    }
}

/// Spaces from a sequence and their leases from another, alike at both ends (issue: every id
/// needs all 32 digits to be unique): at 80, 100 and 120 columns every row keeps its code or
/// its lease's age, the two leases read apart, and what is cut ends in a mark.
#[tokio::test(flavor = "multi_thread")]
async fn ids_alike_at_both_ends_leave_every_row_its_code_and_lease_age() {
    let db = TestDb::migrated().await;
    let space = |n: u32| uuid(&format!("00000000-0000-4000-8000-{n:012}"));
    let lease = |n: u32| uuid(&format!("40000000-0000-4000-8000-{n:012}"));
    let tenant = "tenant-with-a-rather-long-name-0001";
    for n in 1..=2 {
        let spec = JobSpec {
            id: Some(space(n)),
            ..JobSpec::new(tenant, "queued")
        };
        fixture::job(&db.pool, &spec).await;
        fixture::lease_with_id(&db.pool, lease(n), tenant, space(n), 7200).await;
    }
    for (n, code) in [
        (3, "embedding_quota_exceeded"),
        (4, "document_conversion_timeout_after_retries_x"),
    ] {
        let spec = JobSpec {
            id: Some(space(n)),
            ..JobSpec::new(tenant, "failed")
        };
        fixture::job(&db.pool, &spec).await;
        sqlx::query(
            "UPDATE legacy_space_publication_bootstraps SET last_error_code = $2 WHERE id = $1",
        )
        .bind(space(n))
        .bind(code)
        .execute(&db.pool)
        .await
        .expect("code");
    }
    let url = db.url();
    for (cols, height) in [(80u16, 24u16), (100, 30), (120, 40)] {
        let mut console = Console::start(&["watch", "--database-url", &url], &[], cols, height);
        console.wait_ready("READ-WRITE", 20);
        let board = console.wait_until("four rows", 20, |s| {
            s.lines()
                .filter(|l| l.contains("BLOCKED") || l.contains("FAILED"))
                .count()
                == 4
        });
        let rows: Vec<&str> = board
            .lines()
            .filter(|l| l.contains("BLOCKED") || l.contains("FAILED"))
            .collect();
        for row in &rows {
            let kept = if row.contains("BLOCKED") {
                row.contains("lease? 2h")
                    || row.contains("lease? 120m")
                    || row.contains("lease? 1h59")
            } else {
                row.contains("embedding_quota_exceeded") || row.contains("document_conv")
            };
            assert!(kept, "{cols}x{height}: the code or lease age is cut: {row}");
            // The tenant (35 characters) is cut in every width here, with a mark.
            let shown = row.split_whitespace().nth(1).unwrap_or_default();
            assert!(
                !row.contains(tenant) && shown.starts_with("te") && shown.contains('…'),
                "a cut tenant carries a mark: {row}"
            );
        }
        let long = rows
            .iter()
            .find(|r| r.contains("document_conv"))
            .expect("the long code");
        assert!(
            long.contains("document_conversion_timeout_after_retries_x")
                || long.trim_end().ends_with('…'),
            "a cut code ends in a mark: {long}"
        );
        // Each space reads apart, by a form that ends in its own last digit.
        let forms: std::collections::BTreeSet<&str> = rows
            .iter()
            .filter_map(|r| r.split_whitespace().nth(2))
            .collect();
        assert_eq!(
            forms.len(),
            4,
            "{cols}x{height}: spaces read alike:\n{board}"
        );
        for n in 1..=4 {
            assert!(
                forms.iter().any(|f| f.ends_with(&n.to_string())),
                "{forms:?}"
            );
        }
        // The leases view tells the two leases apart.
        console.send("\t");
        console.send("\t");
        let leases = console.wait_until("both leases", 10, |s| {
            s.lines().filter(|l| l.contains("BLOCKS")).count() == 2
        });
        let lines: Vec<&str> = leases.lines().filter(|l| l.contains("BLOCKS")).collect();
        let first_id = |line: &str| {
            line.split_whitespace()
                .find(|w| w.starts_with('4'))
                .map(str::to_string)
        };
        let (a, b) = (first_id(lines[0]), first_id(lines[1]));
        assert!(
            a.is_some() && a != b,
            "{cols}x{height}: the leases read alike:\n{leases}"
        );
        // What the leases view shows of a lease and its space can be typed back as shown:
        // each names exactly the one id it ends like.
        for line in &lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            let lease_form = words.iter().find(|w| w.starts_with('4')).expect("a lease");
            let space_form = words
                .iter()
                .find(|w| w.starts_with('0') && w.contains(".."))
                .expect("its space");
            assert!(!lease_form.contains('…'), "not cut: {line}");
            let n = lease_form
                .chars()
                .last()
                .and_then(|c| c.to_digit(10))
                .expect("a digit");
            let removed = on(
                &db,
                &[
                    "lease",
                    "remove",
                    lease_form,
                    "--reason",
                    "typed back",
                    "--dry-run",
                ],
            );
            assert_eq!(
                removed.status.code(),
                Some(0),
                "{lease_form}: {}",
                stderr(&removed)
            );
            assert!(
                stdout(&removed).contains(&lease(n).to_string())
                    || stdout(&removed).contains(lease_form),
                "{}",
                stdout(&removed)
            );
            let canceled = on(
                &db,
                &["cancel", space_form, "--reason", "typed back", "--dry-run"],
            );
            assert_eq!(
                canceled.status.code(),
                Some(0),
                "{space_form}: {}",
                stderr(&canceled)
            );
        }
        console.send("q");
        assert_eq!(console.wait_exit(10), 0);
    }
    // `status` writes the same last column as the board at 80: a blocked space's lease age.
    let status = stdout(&on(&db, &["status"]));
    let blocked: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("BLOCKED"))
        .collect();
    assert_eq!(blocked.len(), 2, "{status}");
    for line in blocked {
        assert!(
            line.contains("lease? 2h") || line.contains("lease? 1h59"),
            "{line}"
        );
    }
}
