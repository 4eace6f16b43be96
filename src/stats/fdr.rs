//! False discovery rate: the Benjamini–Hochberg adjustment of many p values tested at once.
//!
//! When thousands of functions are compared, some small p values are expected by chance alone; a
//! threshold on the adjusted value (q) instead keeps the expected share of false discoveries among the
//! selected ones at or below it (Benjamini & Hochberg 1995, for independent or positively dependent
//! tests).

/// The Benjamini–Hochberg adjusted p values (q values) of `p`, in input order.
///
/// `q_(i) = min over j ≥ i of m·p_(j)/j` for the p values sorted ascending, clamped to 1: rejecting
/// every hypothesis with `q ≤ α` is the step-up procedure at level α. The q values are monotone in p
/// (ties get the same q) and never below p. A NaN p value counts as 1 and values outside `[0, 1]` are
/// clamped, so that the output is always in `[0, 1]`. Empty in, empty out.
pub fn bh_adjust(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean: Vec<f64> = p.iter().map(|&x| if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) }).collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| clean[i].total_cmp(&clean[j]));
    let mut q = vec![1.0; m];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(clean[i] * m as f64 / (rank + 1) as f64);
        q[i] = running;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::testutil::proptest_config;
    use proptest::prelude::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn worked_examples() {
        // Sorted 0.005, 0.01, 0.03, 0.04 → 4p/rank 0.02, 0.02, 0.04, 0.04 (R's p.adjust(, "BH")).
        assert!(close(&bh_adjust(&[0.01, 0.04, 0.03, 0.005]), &[0.02, 0.04, 0.04, 0.02]));
        // The step-up: 3·0.04/3 = 0.04 caps the 0.045 of the middle one.
        assert!(close(&bh_adjust(&[0.04, 0.01, 0.03]), &[0.04, 0.03, 0.04]));
        assert!(close(&bh_adjust(&[0.01, 0.02, 0.03, 0.04, 0.05]), &[0.05; 5]));
        assert!(close(&bh_adjust(&[0.3, 0.9, 0.6]), &[0.9, 0.9, 0.9]));
        assert!(close(&bh_adjust(&[0.7]), &[0.7]));
    }

    #[test]
    fn clamped_to_one_and_ties_share_a_value() {
        assert!(close(&bh_adjust(&[0.8, 0.9]), &[0.9, 0.9]));
        assert!(close(&bh_adjust(&[0.02, 0.02, 0.5]), &[0.03, 0.03, 0.5]));
        assert!(close(&bh_adjust(&[0.6, 0.6, 0.6]), &[0.6; 3]));
        assert!(close(&bh_adjust(&[0.9, 0.95]), &[0.95, 0.95]));
    }

    #[test]
    fn odd_input_never_escapes_the_unit_interval() {
        assert!(bh_adjust(&[]).is_empty());
        let q = bh_adjust(&[f64::NAN, -0.5, 2.0, 0.01]);
        assert!(q.iter().all(|q| (0.0..=1.0).contains(q)), "{q:?}");
        assert_eq!(q[0], 1.0);
        assert_eq!(q[1], 0.0);
        assert!((q[3] - 0.02).abs() < 1e-12);
    }

    /// The Benjamini–Hochberg step-up rejection set computed directly: the largest rank k with
    /// `p_(k) ≤ k·α/m`, and every p value up to `p_(k)`.
    fn step_up(p: &[f64], alpha: f64) -> Vec<bool> {
        let m = p.len();
        let mut sorted = p.to_vec();
        sorted.sort_by(f64::total_cmp);
        let cut = (1..=m).rev().find(|&k| sorted[k - 1] <= k as f64 * alpha / m as f64).map(|k| sorted[k - 1]);
        p.iter().map(|&x| cut.is_some_and(|c| x <= c)).collect()
    }

    proptest! {
        #![proptest_config(proptest_config(256))]

        #[test]
        fn q_is_bounded_by_p_and_one(p in prop::collection::vec(0.0f64..=1.0, 0..60)) {
            let q = bh_adjust(&p);
            prop_assert_eq!(q.len(), p.len());
            for (pi, qi) in p.iter().zip(&q) {
                prop_assert!(*pi <= *qi + 1e-15 && *qi <= 1.0, "p {} q {}", pi, qi);
            }
        }

        #[test]
        fn q_is_monotone_in_p(p in prop::collection::vec(0.0f64..=1.0, 1..60)) {
            let q = bh_adjust(&p);
            for i in 0..p.len() {
                for j in 0..p.len() {
                    if p[i] <= p[j] {
                        prop_assert!(q[i] <= q[j], "p {} ≤ {} but q {} > {}", p[i], p[j], q[i], q[j]);
                    }
                }
            }
        }

        #[test]
        fn order_of_input_does_not_matter(p in prop::collection::vec(0.0f64..=1.0, 1..60), rot in 0usize..60) {
            let q = bh_adjust(&p);
            let k = rot % p.len();
            let mut rotated = p.clone();
            rotated.rotate_left(k);
            let mut expected = q.clone();
            expected.rotate_left(k);
            prop_assert_eq!(bh_adjust(&rotated), expected);
        }

        #[test]
        fn threshold_on_q_is_the_step_up_procedure(
            p in prop::collection::vec(prop_oneof![0.0f64..0.01, 0.0f64..=1.0], 1..80),
            alpha in 0.001f64..0.5,
        ) {
            let q = bh_adjust(&p);
            let by_q: Vec<bool> = q.iter().map(|&q| q <= alpha).collect();
            prop_assert_eq!(by_q, step_up(&p, alpha));
        }
    }
}
