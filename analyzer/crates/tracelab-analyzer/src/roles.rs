//! Applies a host-role model trained by `tracelab roles train` (the models
//! package's `tracelab-roles` v1 JSON with a `tracelab-c45` tree) to the six
//! role features, exactly as the Python C45Classifier predicts (and so as
//! Weka's J48): normalise `x' = (x − offset) / scale` (a null scale marks a
//! constant feature: x' = 0), walk `le` when `x' <= threshold`, and at an
//! empty leaf use the parent's branch distribution. Leaf class = first
//! maximum of the class counts. Features are never missing here, so the
//! missing-value weighting of C4.5 is not needed.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub const FEATURES: [&str; 6] = ["incnx", "outcnx", "dportin", "dportout", "fan_in", "fan_out"];

#[derive(Debug)]
enum Node {
    Leaf { counts: Vec<f64> },
    Split { feature: usize, threshold: f64, counts: Vec<f64>, branch: [Vec<f64>; 2], children: Box<[Node; 2]> },
}

#[derive(Debug)]
pub struct RoleModel {
    classes: Vec<String>,
    offset: [f64; 6],
    scale: [Option<f64>; 6],
    tree: Node,
}

/// A model file that cannot be applied: `FILE: problem`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct RoleModelError {
    pub path: PathBuf,
    pub problem: ModelProblem,
}

/// What is wrong with a model file.
#[derive(Debug, thiserror::Error)]
pub enum ModelProblem {
    #[error(transparent)]
    Read(io::Error),
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("not a tracelab-roles v1 model (from `tracelab roles train`)")]
    NotRolesModel,
    #[error("features {found:?}, expected {FEATURES:?}")]
    Features { found: Vec<String> },
    /// The classifier's name as JSON (a string is quoted).
    #[error("classifier `{0}` cannot be applied by the analyzer (only C4.5); use `tracelab roles apply`")]
    NotC45(String),
    #[error("normalisation.offset must have 6 numbers")]
    Offset,
    #[error("normalisation.scale must have 6 entries")]
    Scale,
    #[error("tree without classes")]
    NoClasses,
    #[error(transparent)]
    Tree(TreeProblem),
}

/// What is wrong with a node of the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TreeProblem {
    #[error("tree deeper than 1000 levels")]
    TooDeep,
    #[error("node without class_counts")]
    NoClassCounts,
    #[error("split without a feature index 0..6")]
    NoFeature,
    #[error("split without a threshold")]
    NoThreshold,
    #[error("split without two branch_counts")]
    NoBranchCounts,
    #[error("bad branch_counts")]
    BadBranchCounts,
}

fn floats(v: &Value) -> Option<Vec<f64>> {
    v.as_array()?.iter().map(Value::as_f64).collect()
}

fn parse_node(v: &Value, depth: usize) -> Result<Node, TreeProblem> {
    if depth > 1000 {
        return Err(TreeProblem::TooDeep);
    }
    let counts = floats(&v["class_counts"]).ok_or(TreeProblem::NoClassCounts)?;
    if v.get("le").is_none() {
        return Ok(Node::Leaf { counts });
    }
    let feature = v["feature"].as_u64().filter(|&f| f < 6).ok_or(TreeProblem::NoFeature)? as usize;
    let threshold = v["threshold"].as_f64().ok_or(TreeProblem::NoThreshold)?;
    let bc = v["branch_counts"].as_array().filter(|a| a.len() == 2).ok_or(TreeProblem::NoBranchCounts)?;
    let branch =
        [floats(&bc[0]).ok_or(TreeProblem::BadBranchCounts)?, floats(&bc[1]).ok_or(TreeProblem::BadBranchCounts)?];
    let children = Box::new([parse_node(&v["le"], depth + 1)?, parse_node(&v["gt"], depth + 1)?]);
    Ok(Node::Split { feature, threshold, counts, branch, children })
}

/// Index of the first maximum (Weka's Utils.maxIndex).
fn max_index(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best
}

fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

impl RoleModel {
    pub fn load(path: &Path) -> Result<RoleModel, RoleModelError> {
        Self::parse(path).map_err(|problem| RoleModelError { path: path.to_path_buf(), problem })
    }

    fn parse(path: &Path) -> Result<RoleModel, ModelProblem> {
        let text = std::fs::read_to_string(path).map_err(ModelProblem::Read)?;
        let doc: Value = serde_json::from_str(&text).map_err(ModelProblem::NotJson)?;
        if doc["format"] != "tracelab-roles" || doc["version"] != 1 {
            return Err(ModelProblem::NotRolesModel);
        }
        let features: Vec<&str> = doc["features"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if features != FEATURES {
            return Err(ModelProblem::Features { found: features.into_iter().map(String::from).collect() });
        }
        let tree = doc.get("tree").ok_or_else(|| ModelProblem::NotC45(doc["classifier"].to_string()))?;
        let classes: Vec<String> =
            tree["classes"].as_array().into_iter().flatten().filter_map(|c| c.as_str().map(String::from)).collect();
        let norm = &doc["normalisation"];
        let offset = floats(&norm["offset"]).filter(|o| o.len() == 6).ok_or(ModelProblem::Offset)?;
        let scale: Vec<Option<f64>> = norm["scale"]
            .as_array()
            .filter(|s| s.len() == 6)
            .ok_or(ModelProblem::Scale)?
            .iter()
            .map(Value::as_f64)
            .collect();
        let tree = parse_node(&tree["tree"], 0).map_err(ModelProblem::Tree)?;
        let model = RoleModel { classes, offset: offset.try_into().unwrap(), scale: scale.try_into().unwrap(), tree };
        if model.classes.is_empty() {
            return Err(ModelProblem::NoClasses);
        }
        Ok(model)
    }

    /// The predicted class for raw feature values in [`FEATURES`] order.
    pub fn predict(&self, raw: [f64; 6]) -> &str {
        let mut x = [0.0; 6];
        for i in 0..6 {
            x[i] = match self.scale[i] {
                Some(s) => (raw[i] - self.offset[i]) / s,
                None => 0.0,
            };
        }
        let mut node = &self.tree;
        let counts = loop {
            match node {
                Node::Leaf { counts } => break counts,
                Node::Split { feature, threshold, counts, branch, children } => {
                    let i = usize::from(x[*feature] > *threshold);
                    let child = &children[i];
                    let child_counts = match child {
                        Node::Leaf { counts } | Node::Split { counts, .. } => counts,
                    };
                    if sum(child_counts).abs() < 1e-6 {
                        // Empty leaf: the parent's distribution of that branch.
                        break if sum(&branch[i]) > 1e-6 { &branch[i] } else { counts };
                    }
                    node = child;
                }
            }
        };
        &self.classes[max_index(counts).min(self.classes.len() - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(json: &str) -> RoleModel {
        // One file per call: tests run on parallel threads, and two models of
        // the same length once shared a name (a reader saw a file being rewritten).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("roles-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("{n}.json"));
        std::fs::write(&p, json).unwrap();
        RoleModel::load(&p).unwrap()
    }

    const HEAD: &str = r#"{"format": "tracelab-roles", "version": 1,
        "features": ["incnx","outcnx","dportin","dportout","fan_in","fan_out"],
        "normalisation": {"kind": "linear", "offset": [0,0,0,0,0,0], "scale": [10,10,null,10,10,10]},
        "classifier": "c45", "tree": {"classes": ["client","server"], "tree": "#;

    #[test]
    fn walks_le_and_gt_on_normalised_values() {
        // incnx/10 <= 0.5 -> client, else server.
        let m = model(&format!(
            r#"{HEAD}{{"class_counts":[5,5],"feature":0,"threshold":0.5,
            "branch_counts":[[5,0],[0,5]],"le":{{"class_counts":[5,0]}},"gt":{{"class_counts":[0,5]}}}}}}}}"#
        ));
        assert_eq!(m.predict([5.0, 0.0, 0.0, 0.0, 0.0, 0.0]), "client"); // 0.5 <= 0.5
        assert_eq!(m.predict([6.0, 0.0, 0.0, 0.0, 0.0, 0.0]), "server");
    }

    #[test]
    fn constant_feature_is_zero_and_empty_leaf_uses_parent_branch() {
        // dportin has a null scale: x' = 0 <= 0 always goes `le`, an empty
        // leaf, whose branch counts say server.
        let m = model(&format!(
            r#"{HEAD}{{"class_counts":[3,4],"feature":2,"threshold":0.0,
            "branch_counts":[[1,4],[2,0]],"le":{{"class_counts":[0,0]}},"gt":{{"class_counts":[2,0]}}}}}}}}"#
        ));
        assert_eq!(m.predict([0.0, 0.0, 99.0, 0.0, 0.0, 0.0]), "server");
    }

    #[test]
    fn ties_take_the_first_class() {
        let m = model(&format!(r#"{HEAD}{{"class_counts":[2,2]}}}}}}"#));
        assert_eq!(m.predict([0.0; 6]), "client");
    }
}
