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
//! One server reached under two names (`localhost` and `127.0.0.1`, two poolers) counts once.
//! Each write transaction checks again that it runs on the cluster and timeline approved, and a
//! request whose primary moves to another host stops sending. Where a managed database revokes
//! `pg_control_system()`, system identifiers are not compared.
//!
//! `--primary HOST` is the operator's explicit way through: the console then writes to that
//! host whatever these rules say, stderr says what it overrode, and the audit record says the
//! primary was forced (`applied_primary_forced`, `applied_forced_primary_forced` for a forced
//! lease removal); the live console has no such override. A dry run past a refusal still shows
//! its plans (and settles `--request-id`), and exits 10. A host in use that is a standby is not
//! this guard's to refuse: the write is refused as on any standby.

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
    /// The host the check was made on (`host:port`): a request whose primary moves to another
    /// host meanwhile sends nothing more.
    pub host: String,
    /// What each write transaction must land on. `None`: the host in use is a standby (its
    /// writes fail as on any standby), or its system identifier cannot be read.
    pub lineage: Option<Lineage>,
    /// `--primary` named the host: every write is audited as forced.
    pub forced: bool,
    /// The doubt `--primary` overrode, when it overrode one.
    pub forced_over: Option<String>,
}

/// Why writing to the host in use could split the database's history. Its `Display` is the
/// refusal: what was found, then what it means for the write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Doubt {
    SeveralPrimaries {
        primaries: Vec<PrimarySeen>,
        silent: Vec<String>,
    },
    OtherClusters {
        systems: Vec<String>,
    },
    LowerTimeline {
        primary: PrimarySeen,
        written: u32,
        system_id: i64,
    },
}

/// A host that answered as a primary, as a doubt names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrimarySeen {
    host: String,
    timeline: u32,
    wal: crate::store::replica::Lsn,
    started: chrono::DateTime<chrono::Utc>,
    in_use: bool,
}

impl PrimarySeen {
    fn of(answer: &HostAnswer, facts: &HostFacts, primary: &PrimaryFacts) -> Self {
        Self {
            host: answer.host.clone(),
            timeline: primary.timeline,
            wal: primary.wal,
            started: facts.started,
            in_use: answer.in_use,
        }
    }

    /// `host timeline 00000002, WAL 0/3000148, up since 2026-12-03 06:15:20Z (in use)`; the
    /// WAL position left out for a doubt's key.
    fn said(&self, wal: bool) -> String {
        format!(
            "{} timeline {:08X}{}, up since {}{}",
            crate::text::clean(&self.host, 100),
            self.timeline,
            if wal {
                format!(", WAL {}", self.wal)
            } else {
                String::new()
            },
            self.started.format("%Y-%m-%d %H:%M:%SZ"),
            if self.in_use { " (in use)" } else { "" }
        )
    }
}

impl Doubt {
    /// What was found (`wal`: with each primary's WAL position).
    fn found(&self, wal: bool) -> String {
        match self {
            Self::SeveralPrimaries { primaries, silent } => format!(
                "split brain? {} listed hosts answer as primaries: {}{}",
                primaries.len(),
                primaries
                    .iter()
                    .map(|p| p.said(wal))
                    .collect::<Vec<_>>()
                    .join("; "),
                silent_hosts(silent)
            ),
            Self::OtherClusters { systems } => {
                format!(
                    "the listed hosts are not one database: {}",
                    systems.join(", ")
                )
            }
            Self::LowerTimeline {
                primary,
                written,
                system_id,
            } => format!(
                "old primary? {}, but this console has written to timeline {written:08X} of the \
                 same database (system {system_id})",
                primary.said(wal)
            ),
        }
    }

    /// What to do about it.
    fn advice(&self) -> String {
        match self {
            Self::SeveralPrimaries { .. } => "fence the one that should not be (usually the \
                 lower timeline), or name the true primary with `retry`, `cancel` or `lease \
                 remove --primary HOST`"
                .to_string(),
            Self::OtherClusters { .. } => "list one cluster's primary and standbys".to_string(),
            Self::LowerTimeline { system_id, .. } => format!(
                "connect to the current primary; if this one is the primary on purpose (a \
                 restore), name it with `--primary HOST`, or remove the line of system \
                 {system_id} from `timelines` in the console's state directory"
            ),
        }
    }

    /// What the doubt is about, without what moves from one look to the next (each primary's
    /// WAL position): the same key is the same doubt.
    pub fn key(&self) -> String {
        self.found(false)
    }

    /// What was found, without what it means for a refused write: for a write `--primary`
    /// forced past it, and for reads.
    pub fn evidence(&self) -> String {
        self.found(true)
    }
}

impl std::fmt::Display for Doubt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}; nothing was written — {}",
            self.found(true),
            self.advice()
        )
    }
}

impl std::error::Error for Doubt {}

/// " (c:5432 did not answer)" for the hosts that did not.
fn silent_hosts(silent: &[String]) -> String {
    if silent.is_empty() {
        return String::new();
    }
    format!(
        " ({} did not answer)",
        silent
            .iter()
            .map(|h| crate::text::clean(h, 100))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Whether two answers are one server reached under two names (`localhost` and `127.0.0.1`,
/// a socket and TCP, two poolers in front of one primary): the same cluster, started at the
/// same instant, on the same timeline. The WAL position is left out: it moves between the
/// two questions.
fn same_server(a: &HostFacts, b: &HostFacts) -> bool {
    a.system_id == b.system_id
        && a.started == b.started
        && a.primary.map(|p| p.timeline) == b.primary.map(|p| p.timeline)
}

/// Whether the host in use may be written to, given what the hosts answered (`answers`, the
/// one in use among them, answered) and the highest timeline written to before per system
/// (`written`). `forced`: `--primary` named the host in use.
pub fn judge(
    answers: &[HostAnswer],
    written: impl Fn(i64) -> Option<u32>,
    forced: bool,
) -> Result<Approval, Doubt> {
    let in_use = answers.iter().find(|a| a.in_use);
    let in_use_facts = in_use.and_then(|a| a.facts.as_ref().ok());
    let host = in_use.map_or_else(String::new, |a| a.host.clone());
    let (Some(in_use), Some(in_use_facts), Some(in_use_primary)) =
        (in_use, in_use_facts, in_use_facts.and_then(|f| f.primary))
    else {
        return Ok(Approval {
            host,
            lineage: None,
            forced,
            forced_over: None,
        });
    };
    let lineage = in_use_facts.system_id.map(|system_id| Lineage {
        system_id,
        timeline: in_use_primary.timeline,
    });
    // One answer per server, the one in use first.
    let mut answered: Vec<(&HostAnswer, &HostFacts)> = vec![(in_use, in_use_facts)];
    for answer in answers.iter().filter(|a| !a.in_use) {
        if let Ok(facts) = &answer.facts
            && !answered.iter().any(|(_, seen)| same_server(seen, facts))
        {
            answered.push((answer, facts));
        }
    }
    let silent: Vec<String> = answers
        .iter()
        .filter(|a| a.facts.is_err())
        .map(|a| a.host.clone())
        .collect();
    let systems: Vec<i64> = answered.iter().filter_map(|(_, f)| f.system_id).collect();
    let doubt = if systems.windows(2).any(|pair| pair[0] != pair[1]) {
        Some(Doubt::OtherClusters {
            systems: answered
                .iter()
                .map(|(a, facts)| {
                    format!(
                        "{} is system {}",
                        crate::text::clean(&a.host, 100),
                        facts
                            .system_id
                            .map_or_else(|| "unknown".to_string(), |id| id.to_string())
                    )
                })
                .collect(),
        })
    } else {
        let primaries: Vec<PrimarySeen> = answered
            .iter()
            .filter_map(|(a, facts)| Some(PrimarySeen::of(a, facts, facts.primary.as_ref()?)))
            .collect();
        let highest = lineage.and_then(|l| Some((l, written(l.system_id)?)));
        match highest {
            _ if primaries.len() > 1 => Some(Doubt::SeveralPrimaries { primaries, silent }),
            Some((lineage, highest)) if highest > lineage.timeline => Some(Doubt::LowerTimeline {
                primary: PrimarySeen::of(in_use, in_use_facts, &in_use_primary),
                written: highest,
                system_id: lineage.system_id,
            }),
            _ => None,
        }
    };
    match doubt {
        Some(doubt) if !forced => Err(doubt),
        doubt => Ok(Approval {
            host,
            lineage,
            forced,
            forced_over: doubt.map(|d| d.evidence()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::store::replica::Lsn;

    fn started(second: u32) -> chrono::DateTime<chrono::Utc> {
        chrono::Utc
            .with_ymd_and_hms(2026, 12, 3, 6, 15, second)
            .unwrap()
    }

    fn host(name: &str, in_use: bool, system_id: i64, timeline: Option<u32>) -> HostAnswer {
        HostAnswer {
            host: name.into(),
            in_use,
            facts: Ok(HostFacts {
                system_id: Some(system_id),
                primary: timeline.map(|timeline| PrimaryFacts {
                    timeline,
                    wal: Lsn(0x3000148),
                }),
                // Each server its own start, unless a test says otherwise.
                started: started(20 + timeline.unwrap_or(30) + name.len() as u32),
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
        let approval = judge(&answers, NONE, false).expect("one primary");
        assert_eq!(
            approval.lineage,
            Some(Lineage {
                system_id: 7,
                timeline: 2
            })
        );
        assert_eq!(approval.host, "a:5432");
        assert!(!approval.forced && approval.forced_over.is_none());
    }

    #[test]
    fn two_primaries_are_refused_naming_each_timeline_position_and_start() {
        let answers = [
            host("a:5432", true, 7, Some(1)),
            host("b:5433", false, 7, Some(2)),
            silent("c:5432"),
        ];
        let doubt = judge(&answers, NONE, false).expect_err("split brain");
        let said = doubt.to_string();
        for part in [
            "2 listed hosts answer as primaries",
            "a:5432 timeline 00000001, WAL 0/3000148, up since 2026-12-03 06:15:27Z (in use)",
            "b:5433 timeline 00000002",
            "--primary HOST",
            "nothing was written",
            "(c:5432 did not answer)",
        ] {
            assert!(said.contains(part), "{part:?} in {said}");
        }
        // The same primaries looked at again, their WAL further on: the same doubt.
        let later = [
            host("a:5432", true, 7, Some(1)),
            HostAnswer {
                facts: answers[1].facts.clone().map(|mut facts| {
                    facts.primary = Some(PrimaryFacts {
                        timeline: 2,
                        wal: Lsn(0x4000000),
                    });
                    facts
                }),
                ..answers[1].clone()
            },
            silent("c:5432"),
        ];
        let again = judge(&later, NONE, false).expect_err("still split");
        assert_ne!(again.to_string(), doubt.to_string());
        assert_eq!(again.key(), doubt.key());
        assert!(!doubt.key().contains("WAL"), "{}", doubt.key());
        // The operator's way through: written, audited as forced, what was found kept.
        let forced = judge(&answers, NONE, true).expect("forced");
        assert!(forced.forced);
        let kept = forced.forced_over.expect("the doubt overridden");
        assert!(
            said.starts_with(&kept) && !kept.contains("nothing was written"),
            "{kept}"
        );
    }

    #[test]
    fn one_server_under_two_names_is_one_primary() {
        let mut other_name = host("127.0.0.1:5432", false, 7, Some(1));
        let in_use = host("localhost:5432", true, 7, Some(1));
        if let (Ok(facts), Ok(same)) = (&mut other_name.facts, &in_use.facts) {
            facts.started = same.started;
            facts.primary = Some(PrimaryFacts {
                timeline: 1,
                wal: Lsn(0x3000200),
            });
        }
        let approval = judge(&[in_use, other_name], NONE, false).expect("one server");
        assert_eq!(approval.forced_over, None);
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
        assert!(
            said.contains("remove the line of system 7 from `timelines`"),
            "{said}"
        );
        // Another cluster's record says nothing of this one; the same timeline is fine.
        assert!(judge(&answers, |_| Some(1), false).is_ok());
        assert!(judge(&[host("vip:5432", true, 9, Some(1))], written, false).is_ok());
    }

    #[test]
    fn without_a_system_identifier_only_the_primaries_are_counted() {
        let mut unknown = host("a:5432", true, 7, Some(1));
        if let Ok(facts) = &mut unknown.facts {
            facts.system_id = None;
        }
        let approval =
            judge(std::slice::from_ref(&unknown), |_| Some(5), false).expect("nothing to compare");
        assert_eq!(approval.lineage, None);
        assert!(judge(&[unknown, host("b:5432", false, 7, Some(2))], NONE, false).is_err());
    }

    #[test]
    fn a_standby_in_use_is_approved_without_a_lineage() {
        let answers = [
            host("a:5432", true, 7, None),
            host("b:5432", false, 7, Some(2)),
        ];
        let approval = judge(&answers, NONE, false).expect("refused elsewhere");
        assert_eq!(approval.lineage, None);
        assert_eq!(approval.host, "a:5432");
    }
}
