//! An experiment split into blocks, the unit a fleet schedules: block `k` is repetition `k + 1` of
//! every cell, in the plan's (shuffled) order, so each host that runs a block measures every target
//! once and the host is a blocking factor of the comparison. The plan has an id, a hash of the
//! normalised definition (comments, layout and key order do not change it), and each block is named by
//! that id and its index, so the same file always gives the same blocks and a worker can tell that
//! the file it was given is not the one the job was submitted with.

use sha2::{Digest, Sha256};

use super::plan::Plan;
use super::spec::ExperimentFile;

/// One block: the runs of one repetition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Index, from 0 (the Slurm array task id, the Kubernetes completion index).
    pub index: usize,
    /// `PLAN-ID/INDEX`.
    pub id: String,
    /// Indexes into [`Plan::runs`], in execution order.
    pub runs: Vec<usize>,
}

/// The blocks of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPlan {
    /// See [`plan_id`].
    pub plan_id: String,
    /// Every block, by index.
    pub blocks: Vec<Block>,
}

/// The plan id of an experiment definition: `p-` and 16 hex digits of the SHA-256 of its normalised
/// TOML (the parsed file written out again).
pub fn plan_id(file: &ExperimentFile) -> String {
    let normal = toml::to_string(file).unwrap_or_default();
    let digest = Sha256::digest(normal.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("p-{hex}")
}

impl BlockPlan {
    /// Splits `plan` into its blocks.
    pub fn new(plan: &Plan) -> BlockPlan {
        let plan_id = plan_id(&plan.file);
        let count = plan.runs.iter().map(|r| r.repetition as usize).max().unwrap_or(0);
        let blocks = (0..count)
            .map(|index| Block {
                index,
                id: format!("{plan_id}/{index}"),
                runs: plan
                    .runs
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.repetition as usize == index + 1)
                    .map(|(i, _)| i)
                    .collect(),
            })
            .collect();
        BlockPlan { plan_id, blocks }
    }

    /// Blocks `range` (inclusive), checked against the plan: a one-line message naming `flag` when a
    /// block does not exist.
    pub fn select(&self, first: usize, last: usize, flag: &str) -> Result<&[Block], String> {
        let n = self.blocks.len();
        if first > last || last >= n {
            return Err(format!(
                "{flag}: the plan has {n} block(s), 0..{}; {first}..{last} is outside it",
                n.saturating_sub(1)
            ));
        }
        Ok(&self.blocks[first..=last])
    }
}

/// Parses `K` or `K..L` (inclusive) as given to `--block` / `--blocks`.
pub fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let num = |t: &str| t.trim().parse::<usize>().map_err(|_| format!("'{s}' is not a block index or K..L range"));
    match s.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b.trim_start_matches('='))?);
            if a > b {
                return Err(format!("'{s}': the range is empty; write the lower index first"));
            }
            Ok((a, b))
        }
        None => num(s).map(|k| (k, k)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;

    const FILE: &str = r#"
name = "x"
builds = ["a", "b"]
threads = [1, 4]
repetitions = 3
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 100 }
"#;

    fn plan(text: &str) -> Plan {
        Plan::new(&ExperimentFile::parse(text).unwrap(), Path::new("/exp")).unwrap()
    }

    #[test]
    fn a_block_is_one_repetition_of_every_cell() {
        let p = plan(FILE);
        let b = BlockPlan::new(&p);
        assert_eq!(b.blocks.len(), 3);
        for block in &b.blocks {
            let mut cells: Vec<usize> = block.runs.iter().map(|&i| p.runs[i].cell).collect();
            cells.sort();
            assert_eq!(cells, (0..p.cells.len()).collect::<Vec<_>>());
            assert!(block.runs.iter().all(|&i| p.runs[i].repetition as usize == block.index + 1));
            assert_eq!(block.id, format!("{}/{}", b.plan_id, block.index));
        }
        assert!(b.plan_id.starts_with("p-") && b.plan_id.len() == 18, "{}", b.plan_id);
    }

    #[test]
    fn layout_does_not_change_the_plan_and_content_does() {
        let reformatted = format!("# a comment\n{}", FILE.replace("threads = [1, 4]", "threads = [ 1, 4 ]"));
        assert_eq!(plan_id(&ExperimentFile::parse(&reformatted).unwrap()), plan_id(&plan(FILE).file));
        let changed = FILE.replace("table-size = 100", "table-size = 200");
        assert_ne!(plan_id(&ExperimentFile::parse(&changed).unwrap()), plan_id(&plan(FILE).file));
    }

    #[test]
    fn ranges_and_selection() {
        assert_eq!(parse_range("2"), Ok((2, 2)));
        assert_eq!(parse_range("0..3"), Ok((0, 3)));
        assert!(parse_range("3..1").unwrap_err().contains("empty"));
        assert!(parse_range("x").unwrap_err().contains("not a block index"));
        let b = BlockPlan::new(&plan(FILE));
        assert_eq!(b.select(1, 2, "--blocks").unwrap().len(), 2);
        let e = b.select(2, 3, "--blocks").unwrap_err();
        assert_eq!(e, "--blocks: the plan has 3 block(s), 0..2; 2..3 is outside it");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn the_same_file_always_gives_the_same_plan(seed in any::<u64>(), reps in 1u32..6) {
            let text = format!("seed = {seed}\n{FILE}").replace("repetitions = 3", &format!("repetitions = {reps}"));
            let a = BlockPlan::new(&plan(&text));
            let b = BlockPlan::new(&plan(&text));
            prop_assert_eq!(&a, &b);
            prop_assert_eq!(a.blocks.len(), reps as usize);
            let all: usize = a.blocks.iter().map(|b| b.runs.len()).sum();
            prop_assert_eq!(all, plan(&text).runs.len());
        }
    }
}
