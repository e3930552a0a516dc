//! The audit view's verification of the audit chain: when a pass starts, how a long one goes
//! on run after run, and what its end leaves for the next.

use std::time::Instant;

use super::Effect;
use crate::domain::audit_chain::{Start, Verification};
use crate::tui::app::{App, ChainPass, ChainState, View};

/// A pass from the start of the chain (the view opened for the first time, or Ctrl-R). The
/// head verified last must still be in it.
pub(super) fn verify_from_start(app: &mut App) -> Vec<Effect> {
    if app.chain.running.is_some() {
        // Not dropped: the pass starts once the run under way has ended.
        app.chain.whole_asked = true;
        return Vec::new();
    }
    app.chain.whole_asked = false;
    let expect_head = app.chain.expected.clone();
    app.chain.pass = Some(ChainPass {
        from: None,
        records: 0,
        next_run: app.now,
        whole: true,
        expect: expect_head.clone(),
    });
    run(app, None, expect_head)
}

/// What the clock asks for while the audit view is shown: the next run of a pass under way,
/// or a new pass once one is due — from the head verified last, when there is one.
pub(super) fn on_tick(app: &mut App, now: Instant) -> Vec<Effect> {
    if app.view != View::Audit || app.chain.running.is_some() {
        return Vec::new();
    }
    if app.chain.whole_asked {
        return verify_from_start(app);
    }
    if let Some(pass) = &app.chain.pass {
        if now < pass.next_run {
            return Vec::new();
        }
        let (from, expect) = (pass.from.clone(), pass.expect.clone());
        return run(app, from, expect);
    }
    if !app.chain.due(now) {
        return Vec::new();
    }
    match app.chain.intact.clone() {
        Some((head, records)) if !app.chain.whole_due(now) => verify_from_head(app, head, records),
        _ => verify_from_start(app),
    }
}

/// A pass over the records added since `head`, verified last with `records` before it.
fn verify_from_head(
    app: &mut App,
    head: crate::domain::audit_chain::ChainHead,
    records: u64,
) -> Vec<Effect> {
    app.chain.pass = Some(ChainPass {
        from: Some(head.clone()),
        records,
        next_run: app.now,
        whole: false,
        expect: None,
    });
    run(app, Some(head), None)
}

/// The view was opened: a first pass, or the records added since the head verified last (a
/// verdict from a minute ago must not sit above a record it never read).
pub(super) fn on_open(app: &mut App) -> Vec<Effect> {
    if app.chain.running.is_some() || app.chain.pass.is_some() {
        return Vec::new();
    }
    match app.chain.intact.clone() {
        Some((head, records)) if !app.chain.whole_due(app.now) => {
            verify_from_head(app, head, records)
        }
        Some(_) => verify_from_start(app),
        None if app.chain.checked.is_none() => verify_from_start(app),
        // Broken or failed: Ctrl-R reads it all again; the clock does once it is due.
        None => on_tick(app, app.now),
    }
}

fn run(
    app: &mut App,
    from: Option<crate::domain::audit_chain::ChainHead>,
    expect_head: Option<String>,
) -> Vec<Effect> {
    app.chain.running = Some(0);
    vec![Effect::VerifyChain {
        start: Start {
            from,
            expect_head,
            until: Some(app.now + ChainState::RUN_BUDGET),
        },
    }]
}

/// A run ended: the pass goes on after a pause, or ends with its verdict.
pub(super) fn on_run_ended(app: &mut App, found: Result<Verification, String>) {
    app.chain.running = None;
    let now = app.now;
    let Some(mut pass) = app.chain.pass.take() else {
        return;
    };
    let verification = match found {
        Ok(v) => v,
        Err(e) => {
            app.chain.checked = Some((now, Err(e)));
            return;
        }
    };
    pass.records += verification.records;
    if verification.expected_found {
        pass.expect = None;
    }
    if verification.intact() && !verification.complete {
        pass.from = verification.verified.clone();
        pass.next_run = now + ChainState::PAUSE;
        app.chain.pass = Some(pass);
        return;
    }
    if verification.intact() {
        if pass.whole {
            app.chain.whole_at = Some(now);
        }
        app.chain.intact = verification
            .verified
            .clone()
            .map(|head| (head, pass.records));
        if let Some(head) = &verification.verified {
            app.chain.expected = Some(head.hex());
        }
    } else {
        app.chain.intact = None;
    }
    app.chain.checked = Some((
        now,
        Ok(Verification {
            records: pass.records,
            ..verification
        }),
    ));
}
