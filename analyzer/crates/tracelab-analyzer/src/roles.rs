//! The project's one C4.5 predictor ([`C45Tree`], trees from the models
//! package's `C45Classifier.to_json`, format `tracelab-c45`) and the host-role
//! model that applies it to the six role features (`tracelab-roles` v1, from
//! `tracelab roles train`). Python predicts through it too
//! (`tracelab-analyzer predict-c45`, predict_c45.rs). The file and the rule
//! are written down in docs/reference/role-model.md: normalise
//! `x' = (x − offset) / scale` (a null scale marks a constant feature: x' = 0;
//! a missing value stays missing), walk `le` when `x' <= threshold`, at an
//! empty child use the parent's branch distribution, send a missing value
//! down both branches weighted by the branch weights, and take the first
//! class whose probability beats the best so far by more than 1e-6.
//! `models/tests/data/c45_contract.json` holds cases to predict as written;
//! the test below and models/tests/test_c45_contract.py (through Python's
//! normalisation) read it.

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
    tree: C45Tree,
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
    #[error("not a tracelab-c45 v1 tree (from C45Classifier.to_json)")]
    NotC45Tree,
    #[error("tree classes must be strings")]
    ClassNotString,
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
    #[error("split without a feature index below the number of features")]
    NoFeature,
    #[error("split without a threshold")]
    NoThreshold,
    #[error("split without two branch_counts")]
    NoBranchCounts,
    #[error("bad branch_counts")]
    BadBranchCounts,
    #[error("class_counts or branch_counts of another length than the classes")]
    CountsLength,
}

fn floats(v: &Value) -> Option<Vec<f64>> {
    v.as_array()?.iter().map(Value::as_f64).collect()
}

fn parse_node(v: &Value, depth: usize, n_classes: usize, n_features: usize) -> Result<Node, TreeProblem> {
    if depth > 1000 {
        return Err(TreeProblem::TooDeep);
    }
    let counts = floats(&v["class_counts"]).ok_or(TreeProblem::NoClassCounts)?;
    if counts.len() != n_classes {
        return Err(TreeProblem::CountsLength);
    }
    if v.get("le").is_none() {
        return Ok(Node::Leaf { counts });
    }
    let feature = v["feature"].as_u64().filter(|&f| f < n_features as u64).ok_or(TreeProblem::NoFeature)? as usize;
    let threshold = v["threshold"].as_f64().ok_or(TreeProblem::NoThreshold)?;
    let bc = v["branch_counts"].as_array().filter(|a| a.len() == 2).ok_or(TreeProblem::NoBranchCounts)?;
    let branch =
        [floats(&bc[0]).ok_or(TreeProblem::BadBranchCounts)?, floats(&bc[1]).ok_or(TreeProblem::BadBranchCounts)?];
    if branch.iter().any(|b| b.len() != n_classes) {
        return Err(TreeProblem::CountsLength);
    }
    let children = Box::new([
        parse_node(&v["le"], depth + 1, n_classes, n_features)?,
        parse_node(&v["gt"], depth + 1, n_classes, n_features)?,
    ]);
    Ok(Node::Split { feature, threshold, counts, branch, children })
}

/// The tolerance of Weka's `Utils.gr`/`Utils.eq` (weka.core.Utils.SMALL).
const SMALL: f64 = 1e-6;

fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

fn counts_of(node: &Node) -> &[f64] {
    match node {
        Node::Leaf { counts } | Node::Split { counts, .. } => counts,
    }
}

/// Adds `weight` times the class distribution `counts / sum(counts)` to `out`.
fn add_distribution(out: &mut [f64], counts: &[f64], weight: f64) {
    let total = sum(counts);
    if total > 0.0 {
        for (o, c) in out.iter_mut().zip(counts) {
            *o += weight * c / total;
        }
    }
}

/// ClassifierTree.getProbs: adds `weight` times the class probabilities of
/// `x'` below `node` to `out`.
fn add_probs(node: &Node, x: &[f64], weight: f64, out: &mut [f64]) {
    match node {
        Node::Leaf { counts } => add_distribution(out, counts, weight),
        Node::Split { feature, threshold, counts, branch, children } => {
            let v = x[*feature];
            if v.is_nan() {
                // Missing: every non-empty branch, weighted by its share of the
                // training weight at this split.
                let weights = [sum(&branch[0]), sum(&branch[1])];
                let total = weights[0] + weights[1];
                for (child, w) in children.iter().zip(weights) {
                    if sum(counts_of(child)) > 0.0 {
                        add_probs(child, x, weight * w / total, out);
                    }
                }
                return;
            }
            let i = usize::from(v > *threshold);
            let child = &children[i];
            if sum(counts_of(child)).abs() < SMALL {
                // Empty child: the parent's distribution of that branch.
                let parent = if sum(&branch[i]) > SMALL { &branch[i] } else { counts };
                add_distribution(out, parent, weight);
            } else {
                add_probs(child, x, weight, out);
            }
        }
    }
}

/// J48's classifyInstance: the first class whose probability beats the best
/// so far by more than [`SMALL`] (so near-ties go to the earlier class).
fn first_best(probs: &[f64]) -> usize {
    let (mut best, mut index) = (0.0, 0);
    for (i, p) in probs.iter().enumerate() {
        if p - best > SMALL {
            (best, index) = (*p, i);
        }
    }
    index
}

/// A C4.5 tree as `C45Classifier.to_dict` writes it (`tracelab-c45` v1:
/// `features`, `classes`, `tree`), applied to feature values as given: the
/// project's one C4.5 predictor, used by [`RoleModel`] and, through
/// `tracelab-analyzer predict-c45`, by the Python classifier.
#[derive(Debug)]
pub struct C45Tree {
    n_features: usize,
    n_classes: usize,
    root: Node,
}

impl C45Tree {
    /// The tree of a `tracelab-c45` v1 document.
    pub fn from_json(doc: &Value) -> Result<C45Tree, ModelProblem> {
        if doc["format"] != "tracelab-c45" || doc["version"] != 1 {
            return Err(ModelProblem::NotC45Tree);
        }
        Self::parse(doc, doc["features"].as_array().map_or(0, Vec::len))
    }

    /// The `classes` and `tree` of `doc`, splits on features below `n_features`.
    fn parse(doc: &Value, n_features: usize) -> Result<C45Tree, ModelProblem> {
        let n_classes = doc["classes"].as_array().map_or(0, Vec::len);
        if n_classes == 0 {
            return Err(ModelProblem::NoClasses);
        }
        let root = parse_node(&doc["tree"], 0, n_classes, n_features).map_err(ModelProblem::Tree)?;
        Ok(C45Tree { n_features, n_classes, root })
    }

    pub fn n_features(&self) -> usize {
        self.n_features
    }

    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// ClassifierTree.distributionForInstance: the class probabilities of
    /// `x` (NaN = missing) into `out` (`n_classes` long); all zeros when
    /// `x` reaches only empty leaves.
    pub fn probs(&self, x: &[f64], out: &mut [f64]) {
        debug_assert_eq!((x.len(), out.len()), (self.n_features, self.n_classes));
        out.fill(0.0);
        add_probs(&self.root, x, 1.0, out);
    }

    /// J48's classifyInstance of class probabilities: the first class whose
    /// probability beats the best so far by more than 1e-6.
    pub fn best(probs: &[f64]) -> usize {
        first_best(probs)
    }
}

impl RoleModel {
    pub fn load(path: &Path) -> Result<RoleModel, RoleModelError> {
        Self::read(path).map_err(|problem| RoleModelError { path: path.to_path_buf(), problem })
    }

    fn read(path: &Path) -> Result<RoleModel, ModelProblem> {
        let text = std::fs::read_to_string(path).map_err(ModelProblem::Read)?;
        Self::from_json(&serde_json::from_str(&text).map_err(ModelProblem::NotJson)?)
    }

    fn from_json(doc: &Value) -> Result<RoleModel, ModelProblem> {
        if doc["format"] != "tracelab-roles" || doc["version"] != 1 {
            return Err(ModelProblem::NotRolesModel);
        }
        let features: Vec<&str> = doc["features"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if features != FEATURES {
            return Err(ModelProblem::Features { found: features.into_iter().map(String::from).collect() });
        }
        let tree = doc.get("tree").ok_or_else(|| ModelProblem::NotC45(doc["classifier"].to_string()))?;
        let classes = tree["classes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c.as_str().map(String::from).ok_or(ModelProblem::ClassNotString))
            .collect::<Result<Vec<String>, _>>()?;
        let norm = &doc["normalisation"];
        let offset = floats(&norm["offset"]).filter(|o| o.len() == 6).ok_or(ModelProblem::Offset)?;
        let scale: Vec<Option<f64>> = norm["scale"]
            .as_array()
            .filter(|s| s.len() == 6)
            .ok_or(ModelProblem::Scale)?
            .iter()
            .map(Value::as_f64)
            .collect();
        let tree = C45Tree::parse(tree, FEATURES.len())?;
        Ok(RoleModel { classes, offset: offset.try_into().unwrap(), scale: scale.try_into().unwrap(), tree })
    }

    /// The predicted class for raw feature values in [`FEATURES`] order (NaN =
    /// missing).
    pub fn predict(&self, raw: [f64; 6]) -> &str {
        let mut x = [0.0; 6];
        for i in 0..6 {
            x[i] = match self.scale[i] {
                _ if raw[i].is_nan() => f64::NAN,
                Some(s) => (raw[i] - self.offset[i]) / s,
                None => 0.0,
            };
        }
        let mut probs = vec![0.0; self.classes.len()];
        self.tree.probs(&x, &mut probs);
        &self.classes[first_best(&probs)]
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

    /// The cases of the contract with the Python C45Classifier
    /// (models/tests/test_c45_contract.py checks the same file).
    #[test]
    fn predicts_every_case_of_the_shared_contract() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../models/tests/data/c45_contract.json");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let cases = doc["cases"].as_array().unwrap();
        assert!(cases.len() >= 15);
        for case in cases {
            let model = RoleModel::from_json(&doc["models"][case["model"].as_str().unwrap()]).unwrap();
            let raw: Vec<f64> =
                case["raw"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect();
            assert_eq!(model.predict(raw.try_into().unwrap()), case["class"], "{case}");
        }
    }

    #[test]
    fn refuses_counts_of_another_length_and_classes_that_are_not_strings() {
        let doc = |classes: &str, counts: &str| -> Value {
            serde_json::from_str(&format!(
                r#"{{"format": "tracelab-roles", "version": 1,
                "features": ["incnx","outcnx","dportin","dportout","fan_in","fan_out"],
                "normalisation": {{"kind": "linear", "offset": [0,0,0,0,0,0], "scale": [1,1,1,1,1,1]}},
                "classifier": "c45", "tree": {{"classes": {classes}, "tree": {{"class_counts": {counts}}}}}}}"#
            ))
            .unwrap()
        };
        assert!(RoleModel::from_json(&doc(r#"["client","server"]"#, "[1,2]")).is_ok());
        assert!(matches!(
            RoleModel::from_json(&doc(r#"["client","server"]"#, "[1,2,3]")),
            Err(ModelProblem::Tree(TreeProblem::CountsLength))
        ));
        assert!(matches!(RoleModel::from_json(&doc(r#"["client",1]"#, "[1,2]")), Err(ModelProblem::ClassNotString)));
    }

    #[test]
    fn ties_take_the_first_class() {
        let m = model(&format!(r#"{HEAD}{{"class_counts":[2,2]}}}}}}"#));
        assert_eq!(m.predict([0.0; 6]), "client");
    }
}
