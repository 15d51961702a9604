//! A check of an MP4's sample tables before libavformat opens it (demux stage, safe code). libavformat's MOV
//! demuxer builds an index entry (24 bytes) for every sample a track's `stsz` box claims, and nothing in
//! FFmpeg 5.1 bounds that count: a 10 KB file claiming 33 million samples of a constant size took 1.8 GB. In a
//! whole buffer every sample's bytes must be in the buffer, so a track may claim at most as many samples, and
//! as many bytes of samples, as the buffer has bytes; that bounds the index at about 24 bytes per input byte.
//! Anything that does not parse as ISO BMFF boxes is left to libavformat.

/// Boxes that hold the boxes leading to a sample table.
const CONTAINERS: [&[u8; 4]; 5] = [b"moov", b"trak", b"mdia", b"minf", b"stbl"];

/// `Err` says which claim cannot be true of a buffer of `data.len()` bytes.
pub(crate) fn check_sample_tables(data: &[u8]) -> Result<(), String> {
    walk(data, 0, data.len(), data.len() as u64, 0)
}

/// One box: its type, and where its payload lies in `data`.
fn next_box(data: &[u8], pos: usize, end: usize) -> Option<([u8; 4], usize, usize)> {
    let header = data.get(pos..pos.checked_add(8)?)?;
    let size32 = u32::from_be_bytes(header[..4].try_into().ok()?);
    let kind: [u8; 4] = header[4..8].try_into().ok()?;
    let (size, header_len) = match size32 {
        0 => ((end - pos) as u64, 8),
        1 => (
            u64::from_be_bytes(data.get(pos + 8..pos + 16)?.try_into().ok()?),
            16,
        ),
        n => (u64::from(n), 8),
    };
    let box_end = pos.checked_add(usize::try_from(size).ok()?)?;
    (size >= header_len as u64 && box_end <= end).then_some((kind, pos + header_len, box_end))
}

fn walk(
    data: &[u8],
    mut pos: usize,
    end: usize,
    file_len: u64,
    depth: usize,
) -> Result<(), String> {
    while let Some((kind, payload, box_end)) = next_box(data, pos, end) {
        if CONTAINERS.contains(&&kind) && depth < CONTAINERS.len() {
            walk(data, payload, box_end, file_len, depth + 1)?;
        } else if &kind == b"stsz" || &kind == b"stz2" {
            check_stsz(&kind, &data[payload..box_end], file_len)?;
        }
        pos = box_end;
    }
    Ok(())
}

/// `stsz`: version and flags, a constant sample size (0: a table of sizes follows), the sample count. `stz2`:
/// version and flags, 3 reserved bytes and a field size, the sample count.
fn check_stsz(kind: &[u8; 4], payload: &[u8], file_len: u64) -> Result<(), String> {
    let word = |at: usize| {
        payload
            .get(at..at + 4)
            .map(|b| u64::from(u32::from_be_bytes(b.try_into().expect("4 bytes"))))
    };
    let (Some(size_word), Some(count)) = (word(4), word(8)) else {
        return Ok(()); // too short to claim anything: libavformat rejects it
    };
    let sample_size = if kind == b"stsz" { size_word } else { 0 };
    if count > file_len {
        return Err(format!(
            "a track claims {count} samples in a file of {file_len} bytes"
        ));
    }
    if sample_size > 0 && count.saturating_mul(sample_size) > file_len {
        return Err(format!(
            "a track claims {count} samples of {sample_size} bytes ({} bytes) in a file of {file_len} bytes",
            count.saturating_mul(sample_size)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp4_box(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut b = ((payload.len() + 8) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(kind);
        b.extend_from_slice(payload);
        b
    }

    fn with_stsz(sample_size: u32, count: u32, padding: usize) -> Vec<u8> {
        let mut stsz = vec![0u8; 4];
        stsz.extend(sample_size.to_be_bytes());
        stsz.extend(count.to_be_bytes());
        let mut inner = mp4_box(b"stsz", &stsz);
        for kind in [b"stbl", b"minf", b"mdia", b"trak", b"moov"] {
            inner = mp4_box(kind, &inner);
        }
        let mut file = mp4_box(b"ftyp", b"isom\0\0\0\0");
        file.extend(inner);
        file.extend(mp4_box(b"mdat", &vec![0; padding]));
        file
    }

    #[test]
    fn claims_a_buffer_can_hold_pass() {
        assert_eq!(check_sample_tables(&with_stsz(100, 10, 1000)), Ok(()));
        assert_eq!(check_sample_tables(&with_stsz(0, 50, 0)), Ok(()));
        // Not MP4 at all, truncated boxes, odd sizes: left to libavformat.
        for data in [
            &b""[..],
            b"RIFF....AVI ",
            &with_stsz(100, 10, 1000)[..50],
            &[0, 0, 0, 1, 0],
        ] {
            assert_eq!(check_sample_tables(data), Ok(()));
        }
    }

    #[test]
    fn more_samples_or_sample_bytes_than_the_file_has_are_refused() {
        let err = check_sample_tables(&with_stsz(100, 33_000_000, 1000)).unwrap_err();
        assert!(err.contains("33000000 samples in a file of"), "{err}");
        let err = check_sample_tables(&with_stsz(100, 20, 1000)).unwrap_err();
        assert!(
            err.contains("20 samples of 100 bytes (2000 bytes)"),
            "{err}"
        );
        let err = check_sample_tables(&with_stsz(u32::MAX, u32::MAX, 0)).unwrap_err();
        assert!(err.contains("samples in a file of"), "{err}");
    }
}
