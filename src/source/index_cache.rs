//! The index cache of remote videos ([`RemoteOptions::index_cache`](crate::RemoteOptions::index_cache)): what
//! opening a remote video read (an MP4's header and `moov`, the first packets the stream's parameters came
//! from), kept in a directory, one file per object, keyed by its URL, length and ETag (else Last-Modified), so
//! that opening it again reads those bytes from disk: a `HEAD` request, then only the packets the frames need.
//! An object whose ETag or length changed has another key, and is read afresh. Reading or writing the cache
//! never fails a video: a missing, damaged or unwritable entry is a miss (logged).
//!
//! A container indexed by reading it through (a Matroska file, an MPEG-TS: no index framefeed lists by ranges)
//! also keeps the packet index that reading gave, in a second file beside the first ([`Entry::packets`]), so
//! that its next opening lists it from there rather than reading the object through again.
//!
//! The file: `framefeed-index-cache 1\n`, the key's length (u32, little-endian) and the key, the number of
//! pieces (u32), each piece's offset and length (u64 each), then their bytes.

use std::io::{Read, Write};
use std::path::PathBuf;

use bytes::Bytes;

const MAGIC: &[u8] = b"framefeed-index-cache 1\n";
/// No entry holds more (a container whose opening reads more is not cached).
const MAX_ENTRY_BYTES: u64 = 256 << 20;

/// One object's place in the cache.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    path: PathBuf,
    key: String,
}

impl Entry {
    /// The entry of the object `url` (without credentials or query, as shown: nothing secret is written, and a
    /// presigned URL's new signature finds the same entry; the length and version tell objects apart) with this
    /// length and version, in `dir`.
    pub(crate) fn new(dir: &std::path::Path, url: &str, len: u64, version: &str) -> Self {
        let key = format!("{url}\n{len}\n{version}");
        // FNV-1a, 64 bits: stable across builds (the file name must be).
        let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Self {
            path: dir.join(format!("{hash:016x}.ffidx")),
            key,
        }
    }

    /// The entry beside this one that keeps the object's packet index (`.ffpkt`), for a container framefeed
    /// indexes by reading it through (a Matroska file, an MPEG-TS): its next opening lists it from there.
    pub(crate) fn packets(&self) -> PacketIndexEntry {
        PacketIndexEntry(Self {
            path: self.path.with_extension("ffpkt"),
            key: format!("packets\n{}", self.key),
        })
    }

    /// The pieces kept for this object; `None` when there are none (or they are not this object's).
    pub(crate) fn load(&self) -> Option<Vec<(u64, Bytes)>> {
        let mut file = std::fs::File::open(&self.path).ok()?;
        let result = self.read(&mut file);
        if result.is_none() {
            tracing::warn!(path = %self.path.display(), "an index cache entry is damaged or another object's: reading afresh");
        }
        result
    }

    fn read(&self, file: &mut std::fs::File) -> Option<Vec<(u64, Bytes)>> {
        let mut all = Vec::new();
        file.take(MAX_ENTRY_BYTES + 65536)
            .read_to_end(&mut all)
            .ok()?;
        let rest = all.strip_prefix(MAGIC)?;
        let (key_len, rest) = take_u32(rest)?;
        let (key, rest) = rest.split_at_checked(key_len as usize)?;
        if key != self.key.as_bytes() {
            return None;
        }
        let (count, mut rest) = take_u32(rest)?;
        let mut spans = Vec::new();
        for _ in 0..count {
            let (offset, r) = take_u64(rest)?;
            let (len, r) = take_u64(r)?;
            spans.push((offset, len));
            rest = r;
        }
        let data = Bytes::copy_from_slice(rest);
        let mut pieces = Vec::with_capacity(spans.len());
        let mut at = 0_usize;
        for (offset, len) in spans {
            let end = at.checked_add(usize::try_from(len).ok()?)?;
            pieces.push((offset, data.get(at..end).map(|_| data.slice(at..end))?));
            at = end;
        }
        (at == data.len()).then_some(pieces)
    }

    /// Keeps `pieces` (written to a temporary file and renamed, so a reader never sees half an entry).
    pub(crate) fn store(&self, pieces: &[(u64, Bytes)]) {
        let total: u64 = pieces.iter().map(|(_, d)| d.len() as u64).sum();
        if pieces.is_empty() || total > MAX_ENTRY_BYTES {
            return;
        }
        let write = || -> std::io::Result<()> {
            let dir = self.path.parent().expect("a file in the cache directory");
            std::fs::create_dir_all(dir)?;
            let mut file = tempfile::NamedTempFile::new_in(dir)?;
            let mut head = Vec::from(MAGIC);
            head.extend_from_slice(&(self.key.len() as u32).to_le_bytes());
            head.extend_from_slice(self.key.as_bytes());
            head.extend_from_slice(&(pieces.len() as u32).to_le_bytes());
            for (offset, data) in pieces {
                head.extend_from_slice(&offset.to_le_bytes());
                head.extend_from_slice(&(data.len() as u64).to_le_bytes());
            }
            file.write_all(&head)?;
            for (_, data) in pieces {
                file.write_all(data)?;
            }
            file.persist(&self.path).map_err(|e| e.error)?;
            Ok(())
        };
        if let Err(e) = write() {
            tracing::warn!(path = %self.path.display(), error = %e, "could not write an index cache entry");
        }
    }
}

/// The entry of an object's packet index (see [`Entry::packets`]): one piece, the bytes `sample::index` writes
/// and checks (opaque here).
#[derive(Debug)]
pub(crate) struct PacketIndexEntry(Entry);

impl crate::video::KeepIndex for PacketIndexEntry {
    fn load(&self) -> Option<Bytes> {
        match self.0.load()?.as_mut_slice() {
            [(0, data)] => Some(std::mem::take(data)),
            _ => None,
        }
    }

    fn store(&self, index: &[u8]) {
        self.0.store(&[(0, Bytes::copy_from_slice(index))]);
    }
}

fn take_u32(data: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = data.split_at_checked(4)?;
    Some((u32::from_le_bytes(head.try_into().ok()?), rest))
}

fn take_u64(data: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = data.split_at_checked(8)?;
    Some((u64::from_le_bytes(head.try_into().ok()?), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_only_for_its_own_object() {
        let dir = tempfile::tempdir().unwrap();
        let entry = Entry::new(dir.path(), "s3://b/v.mp4", 1000, "\"etag-1\"");
        assert!(entry.load().is_none());
        let pieces = vec![
            (0, Bytes::from_static(b"ftyp")),
            (900, Bytes::from_static(b"moov box")),
        ];
        entry.store(&pieces);
        assert_eq!(entry.load().unwrap(), pieces);
        // Another version of the object: another key, a miss.
        assert!(Entry::new(dir.path(), "s3://b/v.mp4", 1000, "\"etag-2\"")
            .load()
            .is_none());
        // A damaged entry is a miss, not a failure.
        let path = &entry.path;
        let mut bytes = std::fs::read(path).unwrap();
        bytes.truncate(bytes.len() - 3);
        std::fs::write(path, bytes).unwrap();
        assert!(entry.load().is_none());
    }

    #[test]
    fn a_packet_index_is_kept_beside_the_opening_bytes_and_apart_from_them() {
        use crate::video::KeepIndex;
        let dir = tempfile::tempdir().unwrap();
        let entry = Entry::new(dir.path(), "s3://b/v.mkv", 1000, "\"etag-1\"");
        let packets = entry.packets();
        assert!(packets.load().is_none());
        entry.store(&[(0, Bytes::from_static(b"EBML header"))]);
        assert!(
            packets.load().is_none(),
            "the opening bytes are not the index"
        );
        packets.store(b"the index");
        assert_eq!(packets.load().unwrap(), Bytes::from_static(b"the index"));
        assert_eq!(
            entry.load().unwrap()[0].1,
            Bytes::from_static(b"EBML header")
        );
        // Another version of the object: no index.
        let other = Entry::new(dir.path(), "s3://b/v.mkv", 1000, "\"etag-2\"");
        assert!(other.packets().load().is_none());
    }
}
