//! Deterministic chance: every random decision of the simulator is a hash of the run's seed and
//! what the decision is about (a document and its attempt, a worker and its claim), so a fixed
//! `--seed` makes the same documents fail and the same workers crash, whatever order the tasks
//! happen to run in.

/// SplitMix64: small, fast, and good enough for simulated faults and data sizes.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `low..=high`.
    pub(crate) fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }

    pub(crate) fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }
}

/// A decision keyed by the seed and any number of parts.
pub(crate) fn roll(seed: u64, parts: &[u64]) -> Rng {
    let mut mixed = Rng::new(seed);
    let mut state = mixed.next_u64();
    for part in parts {
        state = Rng::new(state ^ part).next_u64();
    }
    Rng::new(state)
}

/// A stable 64-bit key for a UUID or a name.
pub(crate) fn key_of(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_parts_give_the_same_decision() {
        assert_eq!(roll(7, &[1, 2]).next_u64(), roll(7, &[1, 2]).next_u64());
        assert_ne!(roll(7, &[1, 2]).next_u64(), roll(7, &[1, 3]).next_u64());
        assert_ne!(roll(7, &[1, 2]).next_u64(), roll(8, &[1, 2]).next_u64());
    }

    #[test]
    fn chances_are_roughly_fair() {
        let mut rng = Rng::new(42);
        let hits = (0..10_000).filter(|_| rng.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
        assert!((0..1000).all(|_| (3..=9).contains(&rng.between(3, 9))));
    }
}
