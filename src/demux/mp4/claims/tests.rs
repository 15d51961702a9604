//! The claim checker's tests: forged boxes each claim too much, well-formed ones pass.

use super::*;
use crate::demux::mp4::boxes::id3v2_len;
use crate::demux::mp4::test_boxes::mp4_box;
use proptest::prelude::*;

/// Tables where `avc1` is video and `mp4a` audio, as in libavformat.
struct FakeTags;

impl CodecTags for FakeTags {
    fn known(&self, table: TagTable, tag: u32) -> bool {
        let fourcc = tag.to_le_bytes();
        match table {
            TagTable::MovVideo => &fourcc == b"avc1",
            TagTable::MovAudio => &fourcc == b"mp4a",
            TagTable::RiffVideo | TagTable::RiffAudio => false,
        }
    }
}

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

fn nest(path: &[&[u8; 4]], inner: Vec<u8>) -> Vec<u8> {
    path.iter()
        .rev()
        .fold(inner, |acc, kind| mp4_box(kind, &acc))
}

/// `ftyp`, then a movie with one video track holding `stbl_children`, then `padding` bytes of media.
fn movie(stbl_children: &[Vec<u8>], padding: usize) -> Vec<u8> {
    movie_of(b"vide", stbl_children, padding)
}

/// The same with a track of handler type `handler` (`vide`, `soun`...).
fn movie_of(handler: &[u8; 4], stbl_children: &[Vec<u8>], padding: usize) -> Vec<u8> {
    let hdlr = mp4_box(b"hdlr", &[&[0u8; 8][..], handler, &[0; 12]].concat());
    let stbl = mp4_box(b"stbl", &stbl_children.concat());
    let minf = mp4_box(b"minf", &stbl);
    let mdia = mp4_box(b"mdia", &[hdlr, minf].concat());
    let trak = mp4_box(b"trak", &mdia);
    let mut file = mp4_box(b"ftyp", b"isom\0\0\0\0");
    file.extend(mp4_box(b"moov", &trak));
    file.extend(mp4_box(b"mdat", &vec![0; padding]));
    file
}

fn check(data: &[u8]) -> Result<(), String> {
    check_buffer_with(data, 1 << 22, &FakeTags)
}

fn stsz(sample_size: u32, count: u32) -> Vec<u8> {
    mp4_box(b"stsz", &words(&[0, sample_size, count]))
}

/// A video sample description: 78 bytes of fields after its header (depth at 82 of the entry, colour
/// table id at 84), then `extra`.
fn video_fields_with(depth: u16, table_id: u16) -> Vec<u8> {
    let mut fields = vec![0u8; 78];
    fields[74..76].copy_from_slice(&depth.to_be_bytes());
    fields[76..78].copy_from_slice(&table_id.to_be_bytes());
    fields
}

fn avc1_entry(extra: &[u8]) -> Vec<u8> {
    mp4_box(
        b"avc1",
        &[&video_fields_with(24, 0xFFFF)[..], extra].concat(),
    )
}

fn stsd(entries: &[Vec<u8>]) -> Vec<u8> {
    mp4_box(
        b"stsd",
        &[words(&[0, entries.len() as u32]), entries.concat()].concat(),
    )
}

#[test]
fn well_formed_files_pass() {
    let file = movie(
        &[
            stsd(&[avc1_entry(&mp4_box(b"avcC", &[1; 30]))]),
            stsz(1, 10),
        ],
        5000,
    );
    assert_eq!(check(&file), Ok(()));
    // Not MP4 at all, truncated boxes, odd sizes: left to libavformat.
    for data in [
        &b""[..],
        b"RIFF....AVI ",
        &file[..50],
        &[0, 0, 0, 1, 0],
        &[0x47; 400],
    ] {
        assert_eq!(check(data), Ok(()));
    }
}

#[test]
fn more_samples_than_the_file_has_bytes_are_refused() {
    let err = check(&movie(&[stsz(100, 33_000_000)], 1000)).unwrap_err();
    assert!(err.contains("33000000"), "{err}");
    assert!(err.contains("a file of"), "{err}");
    // Two tables of half each add up.
    let half = movie(&[stsz(1, 700), stsz(1, 700)], 1000);
    assert!(check(&half).unwrap_err().contains("1400 samples in all"));
    // The configured limit binds when it is lower than the file's size.
    let err = check_buffer_with(&movie(&[stsz(1, 600)], 1000), 500, &FakeTags).unwrap_err();
    assert!(err.contains("max_container_samples allows 500"), "{err}");
}

#[test]
fn fragments_count_their_samples() {
    let trun = |count| mp4_box(b"trun", &words(&[0x000001, count, 0]));
    let moof = |count| nest(&[b"moof", b"traf"], trun(count));
    let mut file = movie(&[], 0);
    file.extend(moof(100));
    file.extend(mp4_box(b"mdat", &[0; 2000]));
    assert_eq!(check(&file), Ok(()));
    file.extend(moof(80_000_000));
    let err = check(&file).unwrap_err();
    assert!(err.contains("80000100 samples in all"), "{err}");
}

#[test]
fn counts_that_fill_memory_before_any_read_are_held_to_their_box() {
    let sgpd = |count| {
        mp4_box(
            b"sgpd",
            &[words(&[0]), b"sync".to_vec(), words(&[count]), vec![21]].concat(),
        )
    };
    assert_eq!(check(&movie(&[sgpd(1)], 100)), Ok(()));
    assert!(check(&movie(&[sgpd(0x7fff_fff0)], 100))
        .unwrap_err()
        .contains("sgpd"));
    let hdlr = mp4_box(b"hdlr", &[&[0u8; 8][..], b"mdta", &[0; 12]].concat());
    let keys = |count| mp4_box(b"keys", &words(&[0, count]));
    let meta = |count| mp4_box(b"meta", &[hdlr.clone(), keys(count)].concat());
    let with_meta = |count| {
        let mut f = mp4_box(b"ftyp", b"isom\0\0\0\0");
        f.extend(mp4_box(b"moov", &mp4_box(b"udta", &meta(count))));
        f
    };
    assert_eq!(check(&with_meta(0)), Ok(()));
    assert!(check(&with_meta(0x07ff_ffff)).unwrap_err().contains("keys"));
}

#[test]
fn group_and_offset_tables_count_samples_and_must_fit_their_box() {
    let sbgp = |count| {
        mp4_box(
            b"sbgp",
            &[
                words(&[0]),
                b"sync".to_vec(),
                words(&[2, count, 1, count, 1]),
            ]
            .concat(),
        )
    };
    assert_eq!(check(&movie(&[sbgp(10)], 1000)), Ok(()));
    assert!(check(&movie(&[sbgp(0x07ff_ffff)], 1000))
        .unwrap_err()
        .contains("sbgp"));
    let ctts = |entries, count| {
        mp4_box(
            b"ctts",
            &[words(&[0, entries]), words(&[count, 0])].concat(),
        )
    };
    assert_eq!(check(&movie(&[ctts(1, 500)], 1000)), Ok(()));
    assert!(check(&movie(&[ctts(1, 5000)], 1000))
        .unwrap_err()
        .contains("ctts"));
    // More entries than the box holds: the demuxer would read counts from the bytes after it.
    let err = check(&movie(&[ctts(9, 1)], 1000)).unwrap_err();
    assert!(err.contains("claims 9 entries, its box holds 1"), "{err}");
}

#[test]
fn count_prefixed_tables_must_lie_in_their_box() {
    // The fuzzer's find: a 16-byte stco claiming 34 million chunk offsets (a 277 MB allocation).
    let stco = |entries| mp4_box(b"stco", &[words(&[0, entries]), vec![0; 8]].concat());
    assert_eq!(check(&movie(&[stco(2)], 100)), Ok(()));
    let err = check(&movie(&[stco(0x0211_0000)], 100)).unwrap_err();
    assert!(
        err.contains("stco table claims 34668544 entries, its box holds 2"),
        "{err}"
    );
    for (kind, entry) in [(b"stss", 4), (b"stps", 4), (b"stts", 8), (b"co64", 8)] {
        let table = |n| mp4_box(kind, &[words(&[0, n]), vec![0; 2 * entry]].concat());
        assert_eq!(check(&movie(&[table(2)], 100)), Ok(()), "{kind:?}");
        assert!(check(&movie(&[table(3)], 100)).is_err(), "{kind:?}");
    }
    // A table of sample sizes, but not one size for all; stz2's entries are of their field size.
    assert!(check(&movie(&[stsz(0, 10)], 1000)).is_err());
    assert_eq!(check(&movie(&[stsz(7, 10)], 1000)), Ok(()));
    let stz2 = |bits, count| mp4_box(b"stz2", &[words(&[0, bits, count]), vec![0; 4]].concat());
    assert_eq!(check(&movie(&[stz2(4, 8)], 1000)), Ok(()));
    assert!(check(&movie(&[stz2(4, 9)], 1000)).is_err());
    // A fragment's per-sample fields: sizes and composition offsets, 8 bytes a sample here.
    let trun = |count, bytes| {
        mp4_box(
            b"trun",
            &[words(&[0x000A01, count, 0]), vec![0; bytes]].concat(),
        )
    };
    assert_eq!(check(&movie(&[trun(3, 24)], 1000)), Ok(()));
    assert!(check(&movie(&[trun(4, 24)], 1000)).is_err());
}

#[test]
fn raw_audio_chunks_count_their_index_entries() {
    let stsc = |per_chunk| mp4_box(b"stsc", &words(&[0, 1, 1, per_chunk, 1]));
    let stco = |chunks| mp4_box(b"stco", &[words(&[0, chunks]), vec![0; 4 * 40]].concat());
    assert_eq!(check(&movie(&[stsc(4096), stco(40)], 1000)), Ok(()));
    let err = check(&movie(&[stsc(0x7000_0000), stco(40)], 1000)).unwrap_err();
    assert!(err.contains("audio chunk tables"), "{err}");
}

#[test]
fn sample_descriptions_must_lie_in_their_table_and_hold_their_fields() {
    let ok = movie(&[stsd(&[avc1_entry(&[])])], 100);
    assert_eq!(check(&ok), Ok(()));
    // An entry claiming more than its table: the demuxer reads what follows as its boxes.
    let mut long = avc1_entry(&[]);
    long[..4].copy_from_slice(&0x8000_0100u32.to_be_bytes());
    assert!(check(&movie(&[stsd(&[long])], 100))
        .unwrap_err()
        .contains("past the end of its table"));
    // A video entry shorter than the 86 bytes the demuxer reads.
    let short = mp4_box(b"avc1", &[0; 40]);
    let err = check(&movie(&[stsd(&[short.clone(), avc1_entry(&[])])], 100)).unwrap_err();
    assert!(err.contains("shorter than the 86 bytes"), "{err}");
    // An audio entry of 36 bytes is whole in a sound track; in a video track the demuxer reads it as video.
    let mp4a = mp4_box(b"mp4a", &[0; 28]);
    assert_eq!(
        check(&movie_of(
            b"soun",
            &[stsd(std::slice::from_ref(&mp4a))],
            100
        )),
        Ok(())
    );
    assert!(check(&movie(&[stsd(std::slice::from_ref(&mp4a))], 100))
        .unwrap_err()
        .contains("86 bytes"));
    // In a track of another kind, its code decides (mp4a: audio); a code no table knows is read as data.
    assert_eq!(check(&movie_of(b"meta", &[stsd(&[mp4a])], 100)), Ok(()));
    assert!(check(&movie(&[stsd(&[mp4_box(b"tmcd", &[0; 30])])], 100)).is_err());
    assert_eq!(
        check(&movie_of(
            b"tmcd",
            &[stsd(&[mp4_box(b"tmcd", &[0; 30])])],
            100
        )),
        Ok(())
    );
    // A second description of another code is skipped unread, as the demuxer skips it.
    let short_second = mp4_box(b"hev1", &[0; 10]);
    assert_eq!(
        check(&movie(&[stsd(&[avc1_entry(&[]), short_second])], 100)),
        Ok(())
    );
    // Claims inside a description's boxes count like any other.
    let hidden = avc1_entry(&mp4_box(
        b"sgpd",
        &[words(&[0]), b"sync".to_vec(), words(&[0x7fff_0000])].concat(),
    ));
    assert!(check(&movie(&[stsd(&[hidden])], 100))
        .unwrap_err()
        .contains("sgpd"));
}

#[test]
fn an_inline_colour_table_is_part_of_the_fields() {
    let fields = video_fields_with(8, 0); // 8-bit palettized, table id 0: the table is inline
    let mut table = words(&[0]);
    table.extend([0, 0, 0, 255]); // colours 0..=255
    let without = mp4_box(b"avc1", &[&fields[..], &table[..]].concat());
    let err = check(&movie(&[stsd(&[without])], 100)).unwrap_err();
    assert!(
        err.contains(&format!("{} bytes", 86 + 8 + 256 * 8)),
        "{err}"
    );
    let with = mp4_box(
        b"avc1",
        &[&fields[..], &table[..], &[0; 256 * 8][..]].concat(),
    );
    assert_eq!(check(&movie(&[stsd(&[with])], 100)), Ok(()));
}

#[test]
fn compressed_movie_headers_are_refused() {
    let mut file = mp4_box(b"ftyp", b"qt  \0\0\0\0");
    file.extend(mp4_box(b"moov", &mp4_box(b"cmov", &[0; 40])));
    assert!(check(&file).unwrap_err().contains("cmov"));
    // Also where the demuxer takes a `hoov` for the movie box.
    let hoov = mp4_box(b"hoov", &mp4_box(b"cmov", &[0; 40]));
    assert!(check(&hoov).is_err());
}

#[test]
fn id3v2_tags_before_the_file_are_skipped_as_libavformat_skips_them() {
    let forged = movie(&[stsz(100, 33_000_000)], 1000);
    let mut tagged = b"ID3\x04\x00\x00\x00\x00\x00\x0a".to_vec();
    tagged.extend([0; 10]);
    tagged.extend(&forged);
    assert!(check(&tagged).is_err());
    assert_eq!(id3v2_len(&tagged), 20);
}

#[test]
fn the_demuxers_own_limits_are_mirrored() {
    // Boxes nested deeper than the demuxer reads are not read.
    let deep = nest(
        &[
            b"moov", b"udta", b"udta", b"udta", b"udta", b"udta", b"udta", b"udta", b"udta",
            b"udta", b"udta", b"udta",
        ],
        stsz(1, u32::MAX),
    );
    assert_eq!(check(&deep), Ok(()));
    // A `trak` inside a container other than the movie ends that container.
    let stray = nest(
        &[b"moov", b"udta"],
        [mp4_box(b"trak", &[]), stsz(1, u32::MAX)].concat(),
    );
    assert_eq!(check(&stray), Ok(()));
    // A child larger than its parent is clamped to it, not refused.
    let mut clamped = nest(&[b"moov", b"udta"], mp4_box(b"free", &[0; 8]));
    let free_at = clamped.len() - 16;
    clamped[free_at..free_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert_eq!(check(&clamped), Ok(()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any bytes: no panic, whatever the verdict.
    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = check(&data);
        let _ = check_buffer(&data, 10);
    }

    /// Checking top-level boxes one by one (as a live stream is checked) gives the whole buffer's verdict.
    #[test]
    fn box_by_box_equals_whole(counts in proptest::collection::vec(0u32..3000, 1..6), fragmented in any::<bool>()) {
        let boxes: Vec<Vec<u8>> = counts.iter().map(|&c| if fragmented {
            nest(&[b"moof", b"traf"], mp4_box(b"trun", &words(&[0, c])))
        } else {
            mp4_box(b"moov", &mp4_box(b"trak", &stsz(1, c)))
        }).collect();
        let whole = Claims::new(Bound::live(5000), &FakeTags).top_level(&boxes.concat());
        let mut claims = Claims::new(Bound::live(5000), &FakeTags);
        let one_by_one = boxes.iter().try_for_each(|b| claims.top_level(b));
        prop_assert_eq!(whole.is_ok(), one_by_one.is_ok());
        prop_assert_eq!(whole.is_ok(), counts.iter().map(|&c| u64::from(c)).sum::<u64>() <= 5000);
    }
}
