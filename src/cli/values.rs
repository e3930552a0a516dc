//! The domain's enums as command-line values. Their names and order come from the domain, so
//! `--state`, `--checkpoint` and `--attention` accept exactly what the ledger and `--json` say.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::domain::model::{Checkpoint, RunState};
use crate::domain::report::AttentionFilter;
use crate::domain::signals::Attention;

impl ValueEnum for RunState {
    fn value_variants<'a>() -> &'a [Self] {
        Self::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

impl ValueEnum for Checkpoint {
    fn value_variants<'a>() -> &'a [Self] {
        Self::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

/// `any` (needs an operator), `watch`, then every attention class by its label.
const ATTENTION_FILTERS: [AttentionFilter; 2 + Attention::ALL.len()] = {
    let mut all = [AttentionFilter::Any; 2 + Attention::ALL.len()];
    all[1] = AttentionFilter::Watch;
    let mut i = 0;
    while i < Attention::ALL.len() {
        all[i + 2] = AttentionFilter::Class(Attention::ALL[i]);
        i += 1;
    }
    all
};

impl ValueEnum for AttentionFilter {
    fn value_variants<'a>() -> &'a [Self] {
        &ATTENTION_FILTERS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            Self::Any => "any",
            Self::Watch => "watch",
            Self::Class(class) => class.label(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_parses_back_to_itself() {
        for state in RunState::ALL {
            assert_eq!(RunState::from_str(state.as_str(), false), Ok(*state));
        }
        for checkpoint in Checkpoint::ALL {
            assert_eq!(
                Checkpoint::from_str(checkpoint.as_str(), false),
                Ok(*checkpoint)
            );
        }
        for class in Attention::ALL {
            assert_eq!(
                AttentionFilter::from_str(class.label(), false),
                Ok(AttentionFilter::Class(class))
            );
        }
        assert_eq!(
            AttentionFilter::from_str("any", false),
            Ok(AttentionFilter::Any)
        );
        assert_eq!(
            AttentionFilter::from_str("watch", false),
            Ok(AttentionFilter::Watch)
        );
        assert!(RunState::from_str("Running", false).is_err());
    }
}
