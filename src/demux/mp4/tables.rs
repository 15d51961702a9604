//! What one MP4/MOV track's sample tables say that libavformat's index of the track leaves out (demux stage,
//! safe code): the composition offsets (`ctts`) that turn the index's decode times into presentation times,
//! the shift the MOV demuxer applies for negative ones, and whether the track has an edit list. With the
//! demuxer's own index (`FormatContext::index_entries`) they give every packet's timestamps without reading
//! the media data (`demux::indexed`).
//!
//! The rules are FFmpeg 5.1's `mov_read_ctts`: an entry counting no samples is ignored, each other expands to
//! one offset a sample; an offset beyond 2^28 in magnitude, outside the table's last two entries, makes the
//! demuxer drop the whole table; the negative offsets, outside the last two entries, set its `dts_shift`.
//! Fragmented files (`moof`, `mvex`), whose samples come from fragments, have no tables here.

/// One track's tables (borrowed from the file's boxes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrackTables<'a> {
    /// The `ctts` payload, if the track has one.
    ctts: Option<&'a [u8]>,
    /// The track has an edit list with at least one entry.
    pub(crate) edit_list: bool,
}

/// A track's composition offsets, as the MOV demuxer reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Composition {
    /// The composition offset of each sample, in sample order; `None` when the track has none (or the
    /// demuxer drops its table).
    pub(crate) offsets: Option<Vec<i32>>,
    /// What the demuxer adds back to every decode time to give presentation times (its `dts_shift`).
    pub(crate) dts_shift: i64,
}

impl TrackTables<'_> {
    /// The composition offsets of a track of `samples` samples; `None` when its table does not fit its box
    /// or counts more samples than that.
    pub(crate) fn composition(&self, samples: usize) -> Option<Composition> {
        let Some(ctts) = self.ctts else {
            return Some(Composition {
                offsets: None,
                dts_shift: 0,
            });
        };
        let (offsets, dts_shift) = composition_offsets(ctts, samples)?;
        Some(Composition { offsets, dts_shift })
    }
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// The boxes in `data`, in order, as `(kind, payload)`; stops at the first that does not fit.
fn boxes(data: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        let size32 = be32(data, pos)?;
        let kind: [u8; 4] = data.get(pos + 4..pos + 8)?.try_into().ok()?;
        let (header, size) = match size32 {
            1 => (
                16usize,
                u64::from_be_bytes(data.get(pos + 8..pos + 16)?.try_into().ok()?),
            ),
            0 => (8, (data.len() - pos) as u64),
            n => (8, u64::from(n)),
        };
        let size = usize::try_from(size).ok()?;
        if size < header || pos.checked_add(size)? > data.len() {
            return None;
        }
        let payload = &data[pos + header..pos + size];
        pos += size;
        Some((kind, payload))
    })
}

/// The first child of `kind` in `data`.
fn child<'a>(data: &'a [u8], kind: &[u8; 4]) -> Option<&'a [u8]> {
    boxes(data).find(|(k, _)| k == kind).map(|(_, p)| p)
}

/// The tables of the track numbered `track_id` (its `tkhd` `track_ID`) in a file's top-level boxes
/// (`top_level`: the file after any ID3v2 tags, or its parsed boxes with media data left out). `None` for a
/// fragmented file, a file without that track, or tables that do not parse.
pub(crate) fn track_tables(top_level: &[u8], track_id: u32) -> Option<TrackTables<'_>> {
    let mut movie = None;
    for (kind, payload) in boxes(top_level) {
        match &kind {
            b"moof" => return None,
            b"moov" if movie.is_none() => movie = Some(payload),
            _ => {}
        }
    }
    let movie = movie?;
    if child(movie, b"mvex").is_some() {
        return None;
    }
    let track = boxes(movie)
        .filter(|(k, _)| k == b"trak")
        .map(|(_, p)| p)
        .find(|trak| child(trak, b"tkhd").and_then(tkhd_track_id) == Some(track_id))?;
    let edit_list = child(track, b"edts")
        .and_then(|edts| child(edts, b"elst"))
        .and_then(|elst| be32(elst, 4))
        .is_some_and(|n| n > 0);
    let tables = child(track, b"mdia")
        .and_then(|mdia| child(mdia, b"minf"))
        .and_then(|minf| child(minf, b"stbl"))?;
    Some(TrackTables {
        ctts: child(tables, b"ctts"),
        edit_list,
    })
}

/// The `track_ID` of a `tkhd` payload (after its version and flags: two times of 4 or 8 bytes each).
fn tkhd_track_id(tkhd: &[u8]) -> Option<u32> {
    match tkhd.first()? {
        0 => be32(tkhd, 12),
        1 => be32(tkhd, 20),
        _ => None,
    }
}

/// A `ctts` payload's offsets, one a sample, and the demuxer's `dts_shift`, as FFmpeg 5.1 reads them
/// (`None` offsets: the demuxer drops the table). `None`: the table does not fit its box, or counts more than
/// `samples` samples.
fn composition_offsets(ctts: &[u8], samples: usize) -> Option<(Option<Vec<i32>>, i64)> {
    let entries = be32(ctts, 4)? as usize;
    let table = ctts.get(8..8 + entries.checked_mul(8)?)?;
    let mut offsets = Vec::new();
    let mut shift: i64 = 0;
    for (i, entry) in table.chunks_exact(8).enumerate() {
        let count = i32::from_be_bytes(entry[..4].try_into().ok()?);
        let offset = i32::from_be_bytes(entry[4..].try_into().ok()?);
        if count <= 0 {
            continue;
        }
        let count = count as usize;
        if offsets.len().checked_add(count)? > samples {
            return None;
        }
        offsets.try_reserve(count).ok()?;
        offsets.extend(std::iter::repeat_n(offset, count));
        let last_two = i + 2 >= entries;
        if offset.unsigned_abs() > 1 << 28 && !last_two {
            return Some((None, shift));
        }
        if offset < 0 && !last_two {
            // Not `i32::MIN`: that is refused as too large above.
            shift = shift.max(-i64::from(offset));
        }
    }
    Some((Some(offsets), shift))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demux::mp4::test_boxes::mp4_box;

    fn ctts(entries: &[(i32, i32)]) -> Vec<u8> {
        let mut payload = vec![0u8; 4];
        payload.extend((entries.len() as u32).to_be_bytes());
        for (count, offset) in entries {
            payload.extend(count.to_be_bytes());
            payload.extend(offset.to_be_bytes());
        }
        mp4_box(b"ctts", &payload)
    }

    fn tkhd(id: u32) -> Vec<u8> {
        let mut payload = vec![0u8; 12];
        payload.extend(id.to_be_bytes());
        payload.extend([0u8; 64]);
        mp4_box(b"tkhd", &payload)
    }

    fn track(id: u32, stbl: &[Vec<u8>], elst_entries: Option<u32>) -> Vec<u8> {
        let stbl = mp4_box(b"stbl", &stbl.concat());
        let mdia = mp4_box(b"mdia", &mp4_box(b"minf", &stbl));
        let mut children = tkhd(id);
        if let Some(n) = elst_entries {
            let mut elst = vec![0u8; 4];
            elst.extend(n.to_be_bytes());
            elst.extend(vec![0u8; 12 * n as usize]);
            children.extend(mp4_box(b"edts", &mp4_box(b"elst", &elst)));
        }
        children.extend(mdia);
        mp4_box(b"trak", &children)
    }

    /// Track `id`'s composition offsets in `file`, for a track of up to 100 samples.
    fn composition(file: &[u8], id: u32) -> Option<Composition> {
        track_tables(file, id)?.composition(100)
    }

    #[test]
    fn offsets_expand_one_a_sample_and_the_chosen_track_is_found_by_its_id() {
        let audio = track(1, &[], None);
        let video = track(2, &[ctts(&[(2, 512), (0, 99), (1, 0), (3, 1024)])], Some(1));
        let file = [
            mp4_box(b"ftyp", b"isom"),
            mp4_box(b"moov", &[audio, video].concat()),
            mp4_box(b"mdat", &[0u8; 16]),
        ]
        .concat();
        let tables = composition(&file, 2).unwrap();
        assert_eq!(
            tables.offsets,
            Some(vec![512, 512, 0, 1024, 1024, 1024]),
            "the entry counting no samples is ignored"
        );
        assert_eq!(tables.dts_shift, 0);
        assert!(track_tables(&file, 2).unwrap().edit_list);
        assert_eq!(composition(&file, 1).unwrap().offsets, None);
        assert!(!track_tables(&file, 1).unwrap().edit_list);
        assert_eq!(track_tables(&file, 3), None, "no such track");
        // More offsets than the track has samples: not the demuxer's table as it uses it.
        assert_eq!(track_tables(&file, 2).unwrap().composition(5), None);
    }

    #[test]
    fn negative_offsets_shift_decode_times_except_in_the_last_two_entries() {
        let file = mp4_box(
            b"moov",
            &track(1, &[ctts(&[(1, -40), (1, 0), (1, -90), (1, -2000)])], None),
        );
        assert_eq!(composition(&file, 1).unwrap().dts_shift, 40);
    }

    #[test]
    fn a_huge_offset_drops_the_table_as_the_demuxer_does() {
        let file = mp4_box(
            b"moov",
            &track(1, &[ctts(&[(1, -10), (1, 1 << 29), (1, 0), (1, 0)])], None),
        );
        let tables = composition(&file, 1).unwrap();
        assert_eq!((tables.offsets, tables.dts_shift), (None, 10));
        let file = mp4_box(
            b"moov",
            &track(1, &[ctts(&[(1, i32::MIN), (1, 0), (1, 0)])], None),
        );
        assert_eq!(composition(&file, 1).unwrap().offsets, None);
        // In the last two entries it stays.
        let file = mp4_box(b"moov", &track(1, &[ctts(&[(1, 0), (1, 1 << 29)])], None));
        assert_eq!(
            composition(&file, 1).unwrap().offsets,
            Some(vec![0, 1 << 29])
        );
    }

    #[test]
    fn fragmented_files_and_tables_that_do_not_fit_have_none() {
        let movie = mp4_box(b"moov", &track(1, &[], None));
        assert!(track_tables(&movie, 1).is_some());
        let fragmented = [movie.clone(), mp4_box(b"moof", &[])].concat();
        assert_eq!(track_tables(&fragmented, 1), None);
        let with_mvex = mp4_box(
            b"moov",
            &[track(1, &[], None), mp4_box(b"mvex", &[])].concat(),
        );
        assert_eq!(track_tables(&with_mvex, 1), None);
        let mut short = ctts(&[(1, 0), (1, 0)]);
        short[15] = 9; // claims 9 entries
        let file = mp4_box(b"moov", &track(1, &[short], None));
        assert_eq!(composition(&file, 1), None);
    }

    proptest::proptest! {
        /// Any bytes: no panic, and never more offsets than the track's samples.
        #[test]
        fn any_bytes_never_panic_nor_expand_past_the_samples(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            counts in proptest::collection::vec((proptest::prelude::any::<i32>(), -5i32..5), 0..6),
            samples in 0usize..50,
        ) {
            for id in 0..3 {
                if let Some(tables) = track_tables(&data, id) {
                    let _ = tables.composition(samples);
                }
            }
            let file = mp4_box(b"moov", &track(1, &[ctts(&counts)], None));
            if let Some(tables) = track_tables(&file, 1) {
                if let Some(Composition { offsets: Some(offsets), .. }) = tables.composition(samples) {
                    proptest::prop_assert!(offsets.len() <= samples);
                }
            }
        }
    }
}
