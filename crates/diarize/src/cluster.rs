//! Two-cluster k-means over cosine distance.
//!
//! A call has two speakers, so the segments are split into two groups: k-means with k = 2 on unit-length
//! embeddings (spherical k-means: a centroid is the normalised weighted mean of its members, the
//! distance is 1 - cosine). K-means depends on where it starts; it starts from the two embeddings that
//! are farthest apart, which on a two-speaker call are almost always one of each speaker, and is then
//! deterministic. Longer segments weigh more in the centroids, since their embeddings are more reliable.

/// Cosine similarity of two vectors (0 when either is zero).
pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut ab, mut aa, mut bb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa <= 0.0 || bb <= 0.0 {
        0.0
    } else {
        ab / (aa.sqrt() * bb.sqrt())
    }
}

/// Labels 0 or 1 for each point; the point of the first farthest pair member gets 0. Fewer than two
/// points: all 0.
pub(crate) fn two_means(points: &[Vec<f32>], weights: &[f32]) -> Vec<u8> {
    let n = points.len();
    if n < 2 {
        return vec![0; n];
    }
    // The farthest pair: the lowest cosine similarity.
    let mut seed = (0, 1, f32::MAX);
    for i in 0..n {
        for j in i + 1..n {
            let s = cosine(&points[i], &points[j]);
            if s < seed.2 {
                seed = (i, j, s);
            }
        }
    }
    let mut centroids = [points[seed.0].clone(), points[seed.1].clone()];
    let mut labels = vec![0u8; n];
    for _ in 0..100 {
        let next: Vec<u8> = points
            .iter()
            .map(|p| u8::from(cosine(p, &centroids[1]) > cosine(p, &centroids[0])))
            .collect();
        let changed = next != labels;
        labels = next;
        for (c, centroid) in centroids.iter_mut().enumerate() {
            let mut sum = vec![0f32; points[0].len()];
            let mut any = false;
            for ((p, &l), &w) in points.iter().zip(&labels).zip(weights) {
                if usize::from(l) == c {
                    any = true;
                    for (s, x) in sum.iter_mut().zip(p) {
                        *s += w * x / norm(p).max(1e-9);
                    }
                }
            }
            if any {
                *centroid = sum;
            }
        }
        if !changed {
            break;
        }
    }
    labels
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_two_obvious_groups() {
        let points = vec![
            vec![1.0, 0.1],
            vec![-1.0, 0.0],
            vec![0.9, -0.1],
            vec![-0.8, 0.2],
            vec![1.1, 0.0],
        ];
        let labels = two_means(&points, &[1.0; 5]);
        assert_eq!(labels[0], labels[2]);
        assert_eq!(labels[0], labels[4]);
        assert_eq!(labels[1], labels[3]);
        assert_ne!(labels[0], labels[1]);
    }

    #[test]
    fn fewer_than_two_points_are_one_cluster() {
        assert!(two_means(&[], &[]).is_empty());
        assert_eq!(two_means(&[vec![1.0]], &[1.0]), vec![0]);
    }

    #[test]
    fn cosine_of_zero_vector_is_zero() {
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
    }
}
