//! Forward error correction of one video frame: a systematic Reed-Solomon erasure code over
//! GF(2^16) (`reed-solomon-simd`, Leopard-RS), k data shards and m repair shards of equal size;
//! any k of the k + m recover the frame, as the simulator's model of an MDS code assumes
//! (`polycc_sim::engine::video`).

use thiserror::Error;

/// Why a frame cannot be coded or recovered.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum FecError {
    /// Shards of different sizes, of an odd size (the code works on 16-bit symbols), or none.
    #[error("frame {frame}: shards must be of one non-zero even size ({detail})")]
    BadShards {
        /// The frame's index.
        frame: u64,
        /// What is wrong.
        detail: String,
    },
    /// Fewer than k distinct shards.
    #[error("frame {frame}: {have} distinct shards of the {need} needed")]
    TooFew {
        /// The frame's index.
        frame: u64,
        /// Distinct shards given.
        have: usize,
        /// k.
        need: usize,
    },
    /// The coder refused (a shard count it does not support, 2^16 shards or more).
    #[error("frame {frame}: {detail}")]
    Coder {
        /// The frame's index.
        frame: u64,
        /// The coder's message.
        detail: String,
    },
}

/// The m repair shards of frame `frame`'s k data shards (none for m = 0).
pub fn encode(frame: u64, data: &[Vec<u8>], repair: usize) -> Result<Vec<Vec<u8>>, FecError> {
    check_sizes(frame, data.iter().map(Vec::len))?;
    if repair == 0 {
        return Ok(Vec::new());
    }
    reed_solomon_simd::encode(data.len(), repair, data).map_err(|e| FecError::Coder {
        frame,
        detail: e.to_string(),
    })
}

fn check_sizes(frame: u64, mut sizes: impl Iterator<Item = usize>) -> Result<usize, FecError> {
    let bad = |detail: String| FecError::BadShards { frame, detail };
    let first = sizes.next().ok_or_else(|| bad("no shards".into()))?;
    if first == 0 || first % 2 != 0 {
        return Err(bad(format!("{first} bytes")));
    }
    if let Some(other) = sizes.find(|&s| s != first) {
        return Err(bad(format!("{first} and {other} bytes")));
    }
    Ok(first)
}

/// Frame `frame`'s k data shards from any k of its shards, given as (index, bytes) with
/// indices 0..k for data and k..k + m for repair (later duplicates are ignored).
pub fn recover(
    frame: u64,
    k: usize,
    m: usize,
    shards: &[(usize, &[u8])],
) -> Result<Vec<Vec<u8>>, FecError> {
    check_sizes(frame, shards.iter().map(|(_, b)| b.len()))?;
    let mut data: Vec<Option<Vec<u8>>> = vec![None; k];
    let mut repair: Vec<(usize, &[u8])> = Vec::new();
    for &(i, b) in shards {
        if i < k {
            data[i].get_or_insert_with(|| b.to_vec());
        } else if i < k + m && !repair.iter().any(|(r, _)| *r == i - k) {
            repair.push((i - k, b));
        }
    }
    let have = data.iter().flatten().count();
    if have == k {
        return Ok(data.into_iter().flatten().collect());
    }
    if have + repair.len() < k {
        return Err(FecError::TooFew {
            frame,
            have: have + repair.len(),
            need: k,
        });
    }
    let originals: Vec<(usize, &[u8])> = data
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((i, d.as_deref()?)))
        .collect();
    let restored =
        reed_solomon_simd::decode(k, m, originals, repair).map_err(|e| FecError::Coder {
            frame,
            detail: e.to_string(),
        })?;
    let mut out = Vec::with_capacity(k);
    for (i, d) in data.into_iter().enumerate() {
        match d.or_else(|| restored.get(&i).cloned()) {
            Some(d) => out.push(d),
            None => {
                return Err(FecError::Coder {
                    frame,
                    detail: format!("data shard {i} not restored"),
                })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards(k: usize, len: usize, seed: u8) -> Vec<Vec<u8>> {
        (0..k)
            .map(|i| {
                (0..len)
                    .map(|j| (i as u8).wrapping_mul(31) ^ (j as u8).wrapping_add(seed))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn any_k_of_k_plus_m_recover_the_frame() {
        let (k, m, len) = (7, 3, 1100);
        let data = shards(k, len, 5);
        let repair = encode(9, &data, m).expect("encoded");
        assert_eq!(repair.len(), m);
        let all: Vec<(usize, &[u8])> = data
            .iter()
            .chain(&repair)
            .enumerate()
            .map(|(i, b)| (i, b.as_slice()))
            .collect();
        // Every way of losing m shards: here, every window of 3 consecutive shards, and the
        // data shards 0, 3, 6.
        for lost in (0..k + m - 2)
            .map(|s| vec![s, s + 1, s + 2])
            .chain([vec![0, 3, 6]])
        {
            let kept: Vec<(usize, &[u8])> = all
                .iter()
                .copied()
                .filter(|(i, _)| !lost.contains(i))
                .collect();
            assert_eq!(recover(9, k, m, &kept), Ok(data.clone()), "lost {lost:?}");
        }
        // Out of order, with a duplicate.
        let mut mixed: Vec<(usize, &[u8])> = all[3..].to_vec();
        mixed.push(all[9]);
        mixed.reverse();
        assert_eq!(recover(9, k, m, &mixed), Ok(data.clone()));
    }

    #[test]
    fn too_few_or_malformed_shards_are_errors() {
        let data = shards(4, 100, 1);
        let repair = encode(2, &data, 1).expect("encoded");
        let three: Vec<(usize, &[u8])> = vec![
            (0, &data[0]),
            (1, &data[1]),
            (4, &repair[0]),
            (4, &repair[0]),
        ];
        assert_eq!(
            recover(2, 4, 1, &three),
            Err(FecError::TooFew {
                frame: 2,
                have: 3,
                need: 4
            })
        );
        let odd = vec![vec![0u8; 101]; 2];
        assert!(matches!(
            encode(3, &odd, 1),
            Err(FecError::BadShards { frame: 3, .. })
        ));
        let uneven = [vec![0u8; 100], vec![0u8; 102]];
        assert!(matches!(
            encode(3, &uneven, 1),
            Err(FecError::BadShards { .. })
        ));
        assert!(matches!(encode(3, &[], 1), Err(FecError::BadShards { .. })));
        // Without repair shards the data shards are the frame.
        assert_eq!(encode(1, &data, 0), Ok(Vec::new()));
        let whole: Vec<(usize, &[u8])> = data
            .iter()
            .enumerate()
            .map(|(i, b)| (i, b.as_slice()))
            .collect();
        assert_eq!(recover(1, 4, 0, &whole), Ok(data.clone()));
    }
}
