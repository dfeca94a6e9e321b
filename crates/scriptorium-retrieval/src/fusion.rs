//! Reciprocal-rank fusion for hybrid search (spec 02 §6.5): each ranked list adds
//! `1/(60 + rank)` (rank from 1) to the items it holds; ties are broken by the best rank
//! an item reached in any list, then by the item's own order (path, line, id).

/// The rank offset of reciprocal-rank fusion.
pub const RRF_K: f64 = 60.0;

/// Fuse ranked lists of keys. Returns every key once with its fused score, best first.
/// Scores are summed in list order, so the floats do not depend on anything else.
///
/// ```
/// use scriptorium_retrieval::reciprocal_rank_fusion;
///
/// let fused = reciprocal_rank_fusion(&[vec!["a", "b"], vec!["b", "c"]]);
/// let keys: Vec<&str> = fused.iter().map(|(key, _)| *key).collect();
/// assert_eq!(keys, ["b", "a", "c"]);
/// ```
pub fn reciprocal_rank_fusion<K: Ord + Clone>(lists: &[Vec<K>]) -> Vec<(K, f64)> {
    // (key, score, best rank)
    let mut fused: Vec<(K, f64, usize)> = Vec::new();
    let mut at: std::collections::BTreeMap<K, usize> = std::collections::BTreeMap::new();
    for list in lists {
        for (index, key) in list.iter().enumerate() {
            let rank = index + 1;
            let share = 1.0 / (RRF_K + rank as f64);
            match at.get(key).and_then(|&i| fused.get_mut(i)) {
                Some(entry) => {
                    entry.1 += share;
                    entry.2 = entry.2.min(rank);
                }
                None => {
                    at.insert(key.clone(), fused.len());
                    fused.push((key.clone(), share, rank));
                }
            }
        }
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then_with(|| a.0.cmp(&b.0)));
    fused.into_iter().map(|(key, score, _)| (key, score)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_sums_of_reciprocal_ranks() {
        let fused = reciprocal_rank_fusion(&[vec![1, 2, 3], vec![3, 1]]);
        let score = |key: i32| fused.iter().find(|(k, _)| *k == key).map(|(_, s)| *s).expect("present");
        assert_eq!(score(1), 1.0 / 61.0 + 1.0 / 62.0);
        assert_eq!(score(2), 1.0 / 62.0);
        assert_eq!(score(3), 1.0 / 63.0 + 1.0 / 61.0);
        let keys: Vec<i32> = fused.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, [1, 3, 2]);
    }

    #[test]
    fn ties_go_to_the_best_rank_then_the_key() {
        // "b" and "a" both score 1/61 + 1/62, "b" reached rank 1 in the first list,
        // "a" in the second: same best rank, so the key decides.
        let fused = reciprocal_rank_fusion(&[vec!["b", "a"], vec!["a", "b"]]);
        let keys: Vec<&str> = fused.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["a", "b"]);
        // "z" and "x" tie on score and best rank; "y" scores less.
        let fused = reciprocal_rank_fusion(&[vec!["z"], vec!["x", "y"]]);
        let keys: Vec<&str> = fused.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["x", "z", "y"]);
    }
}
