//! Matroska's own checksums: a Cluster that starts with a `CRC-32` element (FFmpeg's and mkvmerge's muxers
//! write one in every Cluster by default) says what its bytes were, so damage inside it that no decoder
//! reports (bits flipped inside a picture's data) can still be seen. FFmpeg's demuxer skips these elements;
//! [`ClusterCrc`] checks them, one Cluster at a time as packets of it are read, and the demuxer marks the
//! video packets of a Cluster whose bytes do not match as damaged (`AV_PKT_FLAG_CORRUPT`).
//!
//! Pure EBML walking over a byte-reading function (the whole video in memory or a file on disk; a remote
//! object is not read further for this): the Segment's children are walked by their sizes from the Segment's
//! start, each Cluster's extent and verdict remembered, so a seek back costs nothing and a Cluster is checked
//! once. A Cluster of unknown size (a live WebM) or a walk that meets an element that does not fit ends the
//! checking for that video: nothing is marked from then on.

use std::collections::BTreeMap;

const EBML_HEADER: u32 = 0x1A45_DFA3;
const SEGMENT: u32 = 0x1853_8067;
const CLUSTER: u32 = 0x1F43_B675;
const CRC32: u32 = 0xBF;

/// Reads bytes at an offset: how many it read (0 at the end).
pub(crate) type ReadFn<'a> = dyn Fn(u64, &mut [u8]) -> std::io::Result<usize> + 'a;

/// What is known of one Cluster: where its children end, and whether its bytes match its CRC-32 (`None`:
/// it has none).
#[derive(Debug, Clone, Copy)]
struct Cluster {
    end: u64,
    matches: Option<bool>,
}

/// The Clusters of one Matroska file, checked as packets of them are read.
#[derive(Debug)]
pub(crate) struct ClusterCrc {
    len: u64,
    /// Where the next Segment child starts (`None`: not found yet; the walk ended when `done`).
    cursor: Option<u64>,
    segment_end: u64,
    done: bool,
    /// Clusters found, by their start.
    clusters: BTreeMap<u64, Cluster>,
}

/// An element's ID and size at `at`, and where its data starts; `None` where it does not parse. A size of all
/// ones (unknown) is `u64::MAX`.
fn element(read: &ReadFn<'_>, at: u64) -> Option<(u32, u64, u64)> {
    let mut head = [0u8; 12];
    let n = read(at, &mut head).ok()?;
    let head = &head[..n];
    let first = *head.first()?;
    let id_len = first.leading_zeros() as usize + 1;
    if id_len > 4 || head.len() < id_len + 1 {
        return None;
    }
    let id = head[..id_len]
        .iter()
        .fold(0u32, |v, &b| (v << 8) | u32::from(b));
    let size_first = head[id_len];
    let size_len = size_first.leading_zeros() as usize + 1;
    if size_len > 8 || head.len() < id_len + size_len {
        return None;
    }
    let mask = if size_len == 8 { 0 } else { 0xFFu8 >> size_len };
    let mut size = u64::from(size_first & mask);
    let mut all_ones = size_first & mask == mask;
    for &b in &head[id_len + 1..id_len + size_len] {
        size = (size << 8) | u64::from(b);
        all_ones &= b == 0xFF;
    }
    let size = if all_ones { u64::MAX } else { size };
    Some((id, size, at + (id_len + size_len) as u64))
}

/// The CRC-32 (IEEE) of `len` bytes from `at`; `None` where they cannot all be read.
fn crc_of(read: &ReadFn<'_>, mut at: u64, mut len: u64) -> Option<u32> {
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    while len > 0 {
        let want = len.min(buf.len() as u64) as usize;
        let n = read(at, &mut buf[..want]).ok()?;
        if n == 0 {
            return None;
        }
        hasher.update(&buf[..n]);
        at += n as u64;
        len -= n as u64;
    }
    Some(hasher.finalize())
}

impl ClusterCrc {
    /// A checker over a Matroska file of `len` bytes.
    pub(crate) fn new(len: u64) -> Self {
        Self {
            len,
            cursor: None,
            segment_end: len,
            done: false,
            clusters: BTreeMap::new(),
        }
    }

    /// Whether the byte at `pos` lies in a Cluster whose CRC-32 does not match its bytes.
    pub(crate) fn damaged_at(&mut self, pos: u64, read: &ReadFn<'_>) -> bool {
        if let Some((_, cluster)) = self.clusters.range(..=pos).next_back() {
            if pos < cluster.end {
                return cluster.matches == Some(false);
            }
        }
        while !self.done && self.cursor.is_none_or(|c| c <= pos) {
            self.step(read);
        }
        match self.clusters.range(..=pos).next_back() {
            Some((_, cluster)) if pos < cluster.end => cluster.matches == Some(false),
            _ => false,
        }
    }

    /// Walks to the next Segment child (finding the Segment first); a Cluster is checked as it is found.
    fn step(&mut self, read: &ReadFn<'_>) {
        let Some(at) = self.cursor else {
            self.cursor = self.segment_start(read);
            self.done |= self.cursor.is_none();
            return;
        };
        if at >= self.segment_end {
            self.done = true;
            return;
        }
        let Some((id, size, data)) = element(read, at) else {
            self.done = true;
            return;
        };
        let end = data.saturating_add(size);
        if size == u64::MAX || end > self.len {
            // Unknown sizes (live WebM), or an element that does not fit: no more checking.
            self.done = true;
            return;
        }
        if id == CLUSTER {
            let matches = match element(read, data) {
                Some((CRC32, 4, crc_data)) if crc_data + 4 <= end => {
                    let mut stored = [0u8; 4];
                    match read(crc_data, &mut stored) {
                        Ok(4) => crc_of(read, crc_data + 4, end - crc_data - 4)
                            .map(|crc| crc == u32::from_le_bytes(stored)),
                        _ => None,
                    }
                }
                _ => None,
            };
            self.clusters.insert(at, Cluster { end, matches });
        }
        self.cursor = Some(end);
    }

    /// Where the Segment's children start, after the EBML header.
    fn segment_start(&mut self, read: &ReadFn<'_>) -> Option<u64> {
        let (id, size, data) = element(read, 0)?;
        if id != EBML_HEADER || size == u64::MAX {
            return None;
        }
        let (id, size, data) = element(read, data.checked_add(size)?)?;
        if id != SEGMENT {
            return None;
        }
        if size != u64::MAX {
            self.segment_end = data.saturating_add(size).min(self.len);
        }
        Some(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An element: ID bytes, an 8-byte size, the data.
    fn el(id: &[u8], data: &[u8]) -> Vec<u8> {
        let mut out = id.to_vec();
        out.push(0x01);
        out.extend_from_slice(&(data.len() as u64).to_be_bytes()[1..]);
        out.extend_from_slice(data);
        out
    }

    /// A Cluster holding `body`, with its CRC-32 first when `crc`.
    fn cluster(body: &[u8], crc: bool) -> Vec<u8> {
        let mut data = Vec::new();
        if crc {
            data.extend_from_slice(&[0xBF, 0x84]);
            data.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        }
        data.extend_from_slice(body);
        el(&[0x1F, 0x43, 0xB6, 0x75], &data)
    }

    fn file(clusters: &[Vec<u8>]) -> (Vec<u8>, Vec<u64>) {
        let mut out = el(&[0x1A, 0x45, 0xDF, 0xA3], &[0x42, 0x86, 0x81, 0x01]);
        let mut segment = el(&[0x15, 0x49, 0xA9, 0x66], b"info");
        let head = out.len() + 12;
        let mut starts = Vec::new();
        for c in clusters {
            starts.push((head + segment.len()) as u64);
            segment.extend_from_slice(c);
        }
        out.extend(el(&[0x18, 0x53, 0x80, 0x67], &segment));
        (out, starts)
    }

    fn reader(data: &[u8]) -> impl Fn(u64, &mut [u8]) -> std::io::Result<usize> + '_ {
        move |at, buf| {
            let at = (at as usize).min(data.len());
            let n = buf.len().min(data.len() - at);
            buf[..n].copy_from_slice(&data[at..at + n]);
            Ok(n)
        }
    }

    proptest! {
        /// A byte changed inside a Cluster's data marks that Cluster, and only it; untouched files mark none.
        #[test]
        fn a_changed_byte_marks_its_cluster_only(
            bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..300), 1..6),
            pick in any::<prop::sample::Index>(),
            offset in any::<prop::sample::Index>(),
            flip in 1u8..=255,
        ) {
            let clusters: Vec<Vec<u8>> = bodies.iter().map(|b| cluster(b, true)).collect();
            let (whole, starts) = file(&clusters);
            let mut check = ClusterCrc::new(whole.len() as u64);
            for &s in &starts {
                prop_assert!(!check.damaged_at(s + 20, &reader(&whole)));
            }
            let hit = pick.index(bodies.len());
            let body_start = starts[hit] + 12 + 6;
            let at = body_start + offset.index(bodies[hit].len()) as u64;
            let mut damaged = whole.clone();
            damaged[at as usize] ^= flip;
            let mut check = ClusterCrc::new(damaged.len() as u64);
            for (i, &s) in starts.iter().enumerate() {
                prop_assert_eq!(check.damaged_at(s + 13, &reader(&damaged)), i == hit);
            }
            // Asked again, out of order (a seek back): the same verdicts.
            for (i, &s) in starts.iter().enumerate().rev() {
                prop_assert_eq!(check.damaged_at(s + 13, &reader(&damaged)), i == hit);
            }
        }
    }

    #[test]
    fn clusters_without_a_crc_and_unknown_sizes_mark_nothing() {
        let (whole, starts) = file(&[cluster(b"abc", false), cluster(b"def", false)]);
        let mut check = ClusterCrc::new(whole.len() as u64);
        assert!(starts
            .iter()
            .all(|&s| !check.damaged_at(s + 13, &reader(&whole))));
        // A Segment of unknown size whose Cluster has an unknown size too: no checking.
        let mut live = el(&[0x1A, 0x45, 0xDF, 0xA3], &[0x42, 0x86, 0x81, 0x01]);
        live.extend_from_slice(&[0x18, 0x53, 0x80, 0x67, 0xFF]);
        live.extend_from_slice(&[
            0x1F, 0x43, 0xB6, 0x75, 0xFF, 0xBF, 0x84, 0, 0, 0, 0, 1, 2, 3,
        ]);
        let mut check = ClusterCrc::new(live.len() as u64);
        assert!(!check.damaged_at(live.len() as u64 - 2, &reader(&live)));
    }

    #[test]
    fn not_matroska_marks_nothing() {
        let data = vec![0u8; 64];
        let mut check = ClusterCrc::new(64);
        assert!(!check.damaged_at(10, &reader(&data)));
    }
}
