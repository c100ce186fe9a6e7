//! `tracelab-analyzer predict-c45 --tree FILE`: class probabilities of a
//! trained C4.5 tree (`tracelab-c45` v1, `C45Classifier.to_json`) for rows
//! of feature values, by the project's one C4.5 predictor
//! ([`crate::roles::C45Tree`]). The Python `C45Classifier.predict_proba`
//! (models/tracelab_models/c45.py) calls it with all its rows at once.
//!
//! Stdin: rows of the tree's `features` count of little-endian `f64` (NaN =
//! missing). Stdout: per row the `classes` count of little-endian `f64`
//! probabilities, in the tree's class order.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::roles::{C45Tree, ModelProblem};

/// Why `predict-c45` failed; [`PredictError::status`] gives the exit class.
#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    #[error("{}: {problem}", path.display())]
    Tree { path: PathBuf, problem: ModelProblem },
    #[error("the feature rows: {0}")]
    Read(#[source] io::Error),
    #[error("the feature rows end inside row {row} ({bytes} of {row_len} bytes)")]
    Truncated { row: u64, bytes: usize, row_len: usize },
    #[error("writing the probabilities: {0}")]
    Write(#[source] io::Error),
}

impl PredictError {
    /// The toolkit's exit class (replay/tracelab/errors.py): 3 input data,
    /// 4 output.
    pub fn status(&self) -> u8 {
        match self {
            PredictError::Write(_) => 4,
            _ => 3,
        }
    }
}

/// Reads the tree file.
pub fn load_tree(path: &Path) -> Result<C45Tree, PredictError> {
    let problem = |problem| PredictError::Tree { path: path.to_path_buf(), problem };
    let text = std::fs::read_to_string(path).map_err(|e| problem(ModelProblem::Read(e)))?;
    let doc = serde_json::from_str(&text).map_err(|e| problem(ModelProblem::NotJson(e)))?;
    C45Tree::from_json(&doc).map_err(problem)
}

/// Predicts every row of `input` into `output`; returns the rows.
pub fn predict_stream(tree: &C45Tree, mut input: impl Read, mut output: impl Write) -> Result<u64, PredictError> {
    let row_len = 8 * tree.n_features();
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes).map_err(PredictError::Read)?;
    let mut rows = bytes.chunks_exact(row_len.max(1));
    let mut x = vec![0.0; tree.n_features()];
    let mut probs = vec![0.0; tree.n_classes()];
    let mut out = Vec::with_capacity(8 * tree.n_classes() * (bytes.len() / row_len.max(1)));
    let mut n = 0u64;
    for row in &mut rows {
        for (v, b) in x.iter_mut().zip(row.chunks_exact(8)) {
            *v = f64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        tree.probs(&x, &mut probs);
        for p in &probs {
            out.extend_from_slice(&p.to_le_bytes());
        }
        n += 1;
    }
    if !rows.remainder().is_empty() {
        return Err(PredictError::Truncated { row: n, bytes: rows.remainder().len(), row_len });
    }
    output.write_all(&out).and_then(|_| output.flush()).map_err(PredictError::Write)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x0 <= 0.5 -> a, else b; the `gt` leaf is empty, so values above
    /// 0.5 take the parent's branch counts [1, 3]; a missing x0 follows
    /// both branches weighted 4:4.
    const TREE: &str = r#"{"format": "tracelab-c45", "version": 1, "features": ["x0", "x1"],
        "classes": [0, 1], "params": {},
        "tree": {"class_counts": [5, 3], "feature": 0, "threshold": 0.5,
                 "branch_counts": [[4, 0], [1, 3]],
                 "le": {"class_counts": [4, 0]}, "gt": {"class_counts": [0, 0]}}}"#;

    fn probs(rows: &[[f64; 2]]) -> Vec<f64> {
        let tree = C45Tree::from_json(&serde_json::from_str(TREE).unwrap()).unwrap();
        let input: Vec<u8> = rows.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = Vec::new();
        assert_eq!(predict_stream(&tree, &input[..], &mut out).unwrap(), rows.len() as u64);
        out.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect()
    }

    #[test]
    fn probabilities_by_hand() {
        assert_eq!(probs(&[[0.5, 9.0], [0.6, 0.0]]), [1.0, 0.0, 0.25, 0.75]);
        // Missing: 4/8 of (1, 0); the empty `gt` leaf adds nothing.
        assert_eq!(probs(&[[f64::NAN, 0.0]]), [0.5, 0.0]);
        assert!(probs(&[]).is_empty());
    }

    #[test]
    fn refuses_cut_rows_and_other_documents() {
        let tree = C45Tree::from_json(&serde_json::from_str(TREE).unwrap()).unwrap();
        let e = predict_stream(&tree, &[0u8; 20][..], Vec::new()).unwrap_err();
        assert!(matches!(e, PredictError::Truncated { row: 1, bytes: 4, row_len: 16 }), "{e}");
        let roles = TREE.replace("tracelab-c45", "tracelab-roles");
        let e = C45Tree::from_json(&serde_json::from_str(&roles).unwrap()).unwrap_err();
        assert!(matches!(e, ModelProblem::NotC45Tree));
        let one_feature = TREE.replace(r#"["x0", "x1"]"#, r#"[]"#);
        let e = C45Tree::from_json(&serde_json::from_str(&one_feature).unwrap()).unwrap_err();
        assert!(matches!(e, ModelProblem::Tree(crate::roles::TreeProblem::NoFeature)));
    }
}
