//! A tiny seeded PRNG (splitmix64): the scenario's only source of randomness, so one seed
//! gives one run, on every machine, with no dependency.

pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A whole number in `[-span, span]` (0 when `span` is 0).
    pub fn symmetric(&mut self, span: i64) -> i64 {
        if span <= 0 {
            return 0;
        }
        let width = (2 * span + 1) as u64;
        (self.next_u64() % width) as i64 - span
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_numbers_and_spans_hold() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
            let j = a.symmetric(5);
            b.symmetric(5);
            assert!((-5..=5).contains(&j));
        }
        assert_eq!(SplitMix64::new(1).symmetric(0), 0);
    }
}
