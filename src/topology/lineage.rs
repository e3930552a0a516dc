//! The split-brain guard: before a request writes, every listed host that answers is asked
//! what it is ([`crate::store::primaries`]), and these rules decide whether the host in use may
//! be written to. Refused when:
//!
//! - the answering hosts are not one cluster (their system identifiers differ);
//! - more than one answers as a primary: an old primary restarted without fencing, whose
//!   writes the promoted one will never see;
//! - the host in use is on a lower timeline than one this console has written to before for
//!   the same cluster ([`super::written`]): an old primary found through a URL that names one
//!   host, or a virtual IP that moved back.
//!
//! `--primary HOST` is the operator's explicit way through: the console then writes to that
//! host whatever these rules say, and the audit record says the primary was forced. A host in
//! use that is a standby is not this guard's to refuse: the write is refused as on any
//! standby.

use crate::store::primaries::{HostAnswer, HostFacts, PrimaryFacts};

/// One cluster's history as a primary writes it: what the console checks again in each write
/// transaction, and what it remembers once written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lineage {
    pub system_id: i64,
    pub timeline: u32,
}

/// The host in use may be written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub lineage: Lineage,
    /// The doubt `--primary` overrode, when it overrode one: the write is audited as forced.
    pub forced_over: Option<String>,
}

/// Why writing to the host in use could split the database's history.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Doubt {
    #[error(
        "split brain? {} listed hosts answer as primaries: {}; nothing was written — fence the \
         one that should not be (usually the lower timeline), or name the true primary with \
         --primary HOST",
        primaries.len(),
        primaries.join("; ")
    )]
    SeveralPrimaries { primaries: Vec<String> },
    #[error(
        "the listed hosts are not one database: {}; nothing was written — list one cluster's \
         primary and standbys",
        systems.join(", ")
    )]
    OtherClusters { systems: Vec<String> },
    #[error(
        "old primary? {primary}, but this console has written to timeline {written:08X} of the \
         same database (system {system_id}); nothing was written — connect to the current \
         primary, or name this one with --primary HOST if it is the primary on purpose (a \
         restore)"
    )]
    LowerTimeline {
        primary: String,
        written: u32,
        system_id: i64,
    },
}

/// `host timeline 00000002, WAL 0/3000148, up since 2026-12-03 06:15:20Z (in use)`.
fn described(answer: &HostAnswer, facts: &HostFacts, primary: &PrimaryFacts) -> String {
    format!(
        "{} timeline {:08X}, WAL {}, up since {}{}",
        crate::text::clean(&answer.host, 100),
        primary.timeline,
        primary.wal,
        facts.started.format("%Y-%m-%d %H:%M:%SZ"),
        if answer.in_use { " (in use)" } else { "" }
    )
}

/// Whether the host in use may be written to, given what the hosts answered (`answers`, the
/// one in use among them) and the highest timeline written to before per system
/// (`written`). `forced`: `--primary` named the host in use. `Ok(None)`: the host in use is a
/// standby, refused elsewhere as such.
pub fn judge(
    answers: &[HostAnswer],
    written: impl Fn(i64) -> Option<u32>,
    forced: bool,
) -> Result<Option<Approval>, Doubt> {
    let Some((in_use, in_use_facts)) = answers
        .iter()
        .find(|a| a.in_use)
        .and_then(|a| Some((a, a.facts.as_ref().ok()?)))
    else {
        return Ok(None);
    };
    let Some(in_use_primary) = in_use_facts.primary else {
        return Ok(None);
    };
    let lineage = Lineage {
        system_id: in_use_facts.system_id,
        timeline: in_use_primary.timeline,
    };
    let answered: Vec<(&HostAnswer, &HostFacts)> = answers
        .iter()
        .filter_map(|a| Some((a, a.facts.as_ref().ok()?)))
        .collect();
    let doubt = if answered
        .iter()
        .any(|(_, facts)| facts.system_id != lineage.system_id)
    {
        Some(Doubt::OtherClusters {
            systems: answered
                .iter()
                .map(|(a, facts)| {
                    format!(
                        "{} is system {}",
                        crate::text::clean(&a.host, 100),
                        facts.system_id
                    )
                })
                .collect(),
        })
    } else {
        let primaries: Vec<String> = answered
            .iter()
            .filter_map(|(a, facts)| Some(described(a, facts, facts.primary.as_ref()?)))
            .collect();
        match written(lineage.system_id) {
            _ if primaries.len() > 1 => Some(Doubt::SeveralPrimaries { primaries }),
            Some(highest) if highest > lineage.timeline => Some(Doubt::LowerTimeline {
                primary: described(in_use, in_use_facts, &in_use_primary),
                written: highest,
                system_id: lineage.system_id,
            }),
            _ => None,
        }
    };
    match doubt {
        Some(doubt) if !forced => Err(doubt),
        doubt => Ok(Some(Approval {
            lineage,
            forced_over: doubt.map(|d| d.to_string()),
        })),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::store::replica::Lsn;

    fn host(name: &str, in_use: bool, system_id: i64, timeline: Option<u32>) -> HostAnswer {
        HostAnswer {
            host: name.into(),
            in_use,
            facts: Ok(HostFacts {
                system_id,
                primary: timeline.map(|timeline| PrimaryFacts {
                    timeline,
                    wal: Lsn(0x3000148),
                }),
                started: chrono::Utc
                    .with_ymd_and_hms(2026, 12, 3, 6, 15, 20)
                    .unwrap(),
            }),
        }
    }

    fn silent(name: &str) -> HostAnswer {
        HostAnswer {
            host: name.into(),
            in_use: false,
            facts: Err("no answer within 3 s".into()),
        }
    }

    const NONE: fn(i64) -> Option<u32> = |_| None;

    #[test]
    fn one_primary_with_its_standbys_is_approved_with_its_lineage() {
        let answers = [
            host("a:5432", true, 7, Some(2)),
            host("b:5432", false, 7, None),
            silent("c:5432"),
        ];
        let approval = judge(&answers, NONE, false)
            .expect("one primary")
            .expect("a primary");
        assert_eq!(
            approval.lineage,
            Lineage {
                system_id: 7,
                timeline: 2
            }
        );
        assert_eq!(approval.forced_over, None);
    }

    #[test]
    fn two_primaries_are_refused_naming_each_timeline_position_and_start() {
        let answers = [
            host("a:5432", true, 7, Some(1)),
            host("b:5433", false, 7, Some(2)),
        ];
        let doubt = judge(&answers, NONE, false).expect_err("split brain");
        let said = doubt.to_string();
        for part in [
            "2 listed hosts answer as primaries",
            "a:5432 timeline 00000001, WAL 0/3000148, up since 2026-12-03 06:15:20Z (in use)",
            "b:5433 timeline 00000002",
            "--primary HOST",
            "nothing was written",
        ] {
            assert!(said.contains(part), "{part:?} in {said}");
        }
        // The operator's way through: written, and said to have been forced.
        let forced = judge(&answers, NONE, true)
            .expect("forced")
            .expect("a primary");
        assert_eq!(forced.forced_over, Some(said));
    }

    #[test]
    fn hosts_of_different_clusters_are_refused() {
        let answers = [
            host("a:5432", true, 7, Some(1)),
            host("b:5432", false, 8, None),
        ];
        let said = judge(&answers, NONE, false)
            .expect_err("two clusters")
            .to_string();
        assert!(
            said.contains("a:5432 is system 7, b:5432 is system 8"),
            "{said}"
        );
    }

    #[test]
    fn a_primary_on_a_lower_timeline_than_written_to_is_refused() {
        let answers = [host("vip:5432", true, 7, Some(1))];
        let written = |system: i64| (system == 7).then_some(2);
        let said = judge(&answers, written, false)
            .expect_err("old primary")
            .to_string();
        assert!(
            said.contains("timeline 00000002 of the same database"),
            "{said}"
        );
        assert!(said.contains("vip:5432 timeline 00000001"), "{said}");
        // Another cluster's record says nothing of this one; the same timeline is fine.
        assert!(judge(&answers, |_| Some(1), false).is_ok());
        assert!(judge(&[host("vip:5432", true, 9, Some(1))], written, false).is_ok());
    }

    #[test]
    fn a_standby_in_use_is_not_this_guards_to_refuse() {
        let answers = [
            host("a:5432", true, 7, None),
            host("b:5432", false, 7, Some(2)),
        ];
        assert_eq!(judge(&answers, NONE, false), Ok(None));
    }
}
