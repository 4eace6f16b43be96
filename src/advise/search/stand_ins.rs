//! Values that stand in for each other. The attribution can find a group that moves the advised set
//! although leaving out any one member costs nothing: either member is enough (`innodb_io_capacity`
//! and `innodb_io_capacity_max` both lifting a flushing limit), so which one to set was not measured.
//! One step measures the advice so far and, for each member, the advice with that member alone on
//! top; the member that is faster by more than the noise band at the lower end of its interval (the
//! best by that end) is recommended with that comparison as its contribution. The others are not: one
//! of them is enough. Choosing the best of several comparisons would raise the chance of a false
//! pick with each member, so their intervals are widened to a family-wise confidence (Bonferroni).

use super::{Bench, Config, Fate, Phase, Search, Tier, alone, describe, gain, gain_lo, proven_alone, union};
use crate::error::Result;
use crate::stats::{self, SampleLevel, Verdict};

impl Search<'_> {
    /// Resolves the stand-in groups the safe attribution found, on top of `advised`; returns whether a
    /// value was recommended. A group the budget has no room for keeps its fates, with a note.
    pub(super) fn resolve_stand_ins(&mut self, advised: &[usize], bench: &mut dyn Bench) -> Result<bool> {
        let mut base = advised.to_vec();
        let mut any = false;
        for members in std::mem::take(&mut self.stand_ins) {
            let names: Vec<&str> = members.iter().map(|&i| self.cands[i].variable.as_str()).collect();
            let group = match names.len() {
                1 => format!("{} acted only in a group whose other members were slower", names[0]),
                _ => format!("{} stand in for each other", names.join(", ")),
            };
            let (label, on) =
                if base.is_empty() { ("current", "the current config") } else { ("advised", "the advice") };
            let mut configs = vec![Config::on_top(label, base.clone())];
            configs.extend(
                members
                    .iter()
                    .map(|&i| Config::on_top(format!("{label}+{}", self.cands[i].variable), union(&base, &[i]))),
            );
            let reps = self.screen_reps.max(self.s.attribution_repetitions);
            if bench.cost(configs.len(), reps) > self.left(bench) {
                self.out.notes.push(format!(
                    "{group}; the budget left no room to measure each alone on top of {on}, so none of them is \
                     recommended"
                ));
                continue;
            }
            let results = self.run(Phase::StandIns, configs, reps, bench)?;
            let Ok(reference) = results[0].as_ref().map(|s| s.combined.clone()) else {
                self.out.notes.push(format!("{group}; they could not be measured one by one: {on} failed"));
                continue;
            };
            let mut cfg = self.s.compare;
            cfg.bootstrap.confidence = 1.0 - (1.0 - cfg.bootstrap.confidence) / members.len() as f64;
            let measured: Vec<(usize, std::result::Result<_, String>)> = members
                .iter()
                .zip(&results[1..])
                .map(|(&i, r)| {
                    let c = r.as_ref().map_err(String::clone).and_then(|s| {
                        let text = self.detectable_text(&reference, &s.combined);
                        stats::compare(&reference, &s.combined, SampleLevel::Repetitions, &cfg)
                            .map(|c| (c, text))
                            .map_err(|e| e.to_string())
                    });
                    (i, c)
                })
                .collect();
            let best = measured
                .iter()
                .filter_map(|(i, r)| r.as_ref().ok().map(|(c, _)| (*i, c)))
                .filter(|(_, c)| proven_alone(c))
                .max_by(|x, y| gain_lo(x.1).total_cmp(&gain_lo(y.1)))
                .map(|(i, c)| (i, *c));
            if let Some((b, c)) = &best {
                self.out.fates[*b] = Fate::Recommended(Tier::Safe);
                self.out.contributions[*b] = alone(c);
                self.out.notes.push(format!(
                    "{group}: measured one by one on top of {on}, {} is enough ({}; intervals at {:.1} % for {} \
                     value(s))",
                    self.cands[*b].variable,
                    describe(c),
                    cfg.bootstrap.confidence * 100.0,
                    names.len()
                ));
                base = union(&base, &[*b]);
                any = true;
            }
            for (i, r) in measured {
                if best.as_ref().is_some_and(|(b, _)| *b == i) {
                    continue;
                }
                let within = |c: &stats::Comparison| gain(c).abs() <= c.noise_band;
                let fate = match (r, &best) {
                    (Err(e), _) => Fate::Failed(format!("measured alone on top of {on}: {e}")),
                    (Ok((c, _)), _) if c.verdict == Verdict::Slower => {
                        Fate::Slower(format!("{group}, but alone on top of {on} it was slower: {}", describe(&c)))
                    }
                    (Ok((c, _)), Some((b, _))) if c.verdict == Verdict::Faster => Fate::NotProven(format!(
                        "stands in for {}, which is recommended and measured better; alone on top of {on} it gave {}: \
                         one of them is enough",
                        self.cands[*b].variable,
                        describe(&c)
                    )),
                    (Ok((c, text)), _) if within(&c) => Fate::NoEffect(format!(
                        "no effect measured on this workload: {group}, but alone on top of {on} it gave {}, within \
                         the noise band (±{:.1} %){text}",
                        describe(&c),
                        c.noise_band * 100.0
                    )),
                    (Ok((c, text)), _) => Fate::NotProven(format!(
                        "{group}, but alone on top of {on} it was not shown faster beyond the noise band: {}{text}",
                        describe(&c)
                    )),
                };
                self.out.fates[i] = fate;
            }
        }
        Ok(any)
    }
}
