//! The model half of the poller: owns the [`Fleet`], applies polls, answers the board's
//! queries, moves the clock between polls, and publishes. It never waits for the database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};

use super::{Focused, PollHealth, PollStatus};
use crate::domain::board::BoardQuery;
use crate::domain::fleet::Fleet;
use crate::domain::signals::Thresholds;
use crate::store::sync::Changes;

/// How often the clock moves between polls (signals that change with time change on time).
const TICK: Duration = Duration::from_millis(250);

pub(super) enum Input {
    Query(BoardQuery),
    Polled {
        changes: Box<Changes>,
        focused: Option<Focused>,
        /// When the poll started: the local instant of `changes.db_now`.
        started: Instant,
        polling: PollHealth,
    },
    Focused(Focused),
    Messages(Vec<crate::store::fleet::MessageRow>),
    Polling(PollHealth),
}

struct Model {
    fleet: Fleet,
    status: PollStatus,
    /// The last poll's clock and the local instant it corresponds to.
    anchor: Option<(DateTime<Utc>, Instant)>,
    publisher: watch::Sender<PollStatus>,
    /// The last poll read a standby that had not replayed all the primary had written.
    lagging: bool,
}

pub(super) async fn run(
    thresholds: Thresholds,
    mut inbox: mpsc::UnboundedReceiver<Input>,
    publisher: watch::Sender<PollStatus>,
) {
    let status = publisher.borrow().clone();
    let mut model = Model {
        fleet: Fleet::new(thresholds),
        status,
        anchor: None,
        publisher,
        lagging: false,
    };
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            input = inbox.recv() => {
                let Some(input) = input else { return };
                let mut fleet_changed = model.take(input);
                // Take whatever else is waiting (typed filter keys, say) before publishing once.
                while let Ok(input) = inbox.try_recv() {
                    fleet_changed |= model.take(input);
                }
                model.publish(fleet_changed);
            }
            _ = tick.tick() => {
                if model.advance(Instant::now()) {
                    model.publish(true);
                }
            }
        }
    }
}

impl Model {
    /// Takes one input; returns whether the fleet's published state changed.
    fn take(&mut self, input: Input) -> bool {
        match input {
            Input::Query(query) => {
                self.fleet.set_query(query);
                true
            }
            Input::Polled {
                changes,
                focused,
                started,
                polling,
            } => {
                self.anchor = Some((changes.db_now, started));
                self.lagging = changes
                    .replication
                    .is_some_and(|r| r.measured && !r.caught_up());
                self.fleet.apply(*changes);
                if let Some(focused) = focused {
                    self.status.focused = Some(Arc::new(focused));
                }
                self.status.polling = polling;
                true
            }
            Input::Focused(focused) => {
                self.status.focused = Some(Arc::new(focused));
                false
            }
            Input::Messages(rows) => {
                self.status.messages = Some(Arc::new(rows));
                false
            }
            Input::Polling(polling) => {
                self.status.polling = polling;
                false
            }
        }
    }

    /// Moves the fleet's clock to the database time of `local`; whether any row changed.
    fn advance(&mut self, local: Instant) -> bool {
        let Some((db_now, at)) = self.anchor else {
            return false;
        };
        // Data from a standby behind its primary is as of an instant that does not move with
        // the local clock: ages wait for the next poll instead of running past the data.
        if self.lagging {
            return false;
        }
        // Paused, the board is the snapshot the operator stopped on: nothing on it ages
        // (late, stuck, lease ages) until polling resumes, when it catches up at once.
        if self.status.polling.paused {
            return false;
        }
        let Ok(elapsed) = chrono::Duration::from_std(local.saturating_duration_since(at)) else {
            return false;
        };
        self.fleet.advance(db_now + elapsed) > 0
    }

    fn publish(&mut self, fleet_changed: bool) {
        if fleet_changed && let Some(snapshot) = self.fleet.snapshot() {
            // The local instant of the snapshot's clock, for ages between polls.
            self.status.fleet_at = self.anchor.map(|(db_now, at)| {
                let ahead = (snapshot.db_now - db_now).to_std().unwrap_or_default();
                at + ahead
            });
            self.status.fleet = Some(Arc::new(snapshot));
        }
        self.status.sequence += 1;
        // No receiver left means the UI is gone; the input channel ends the task next.
        let _ = self.publisher.send(self.status.clone());
    }
}
